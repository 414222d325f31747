"""Review of a run (DESIGN §10): triage, cancel, delta, live progress, the case view, and the
report's query count. Runs are real (offline engine, inline); canaries plant findings."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from qalab.models import Organization
from runs import services
from runs.models import (
    CaseStatus,
    FindingTriage,
    Run,
    RunArtifact,
    RunCase,
    RunFinding,
    RunStatus,
    RunTurn,
    TriageState,
    Verdict,
)
from runs.report.build import count_triage_states
from runs.selectors import (
    run_delta_candidates,
    run_get_case,
    run_get_progress,
    run_triage_latest,
)
from runs.services import generate, simulate
from tests.factories import bare_run
from tests.runs.helpers import (
    RecordingDispatcher,
    add_findings,
    delta_json,
    generate_only,
    report_json,
    start_run,
)

pytestmark = pytest.mark.django_db

INVENT = "canary:invent_price"


@pytest.fixture
def reviewers(django_user_model: Any) -> tuple[Any, Any]:
    return (
        django_user_model.objects.create_user(username="alice", password="pw-123456"),
        django_user_model.objects.create_user(username="bob", password="pw-123456"),
    )


@pytest.fixture
def locked_run(demo_org: Organization) -> Run:
    """A reported (locked) run with findings: the canary invents a price in every reply (one
    finding per case, its occurrences folded together)."""
    run = start_run(demo_org, responder=INVENT, scenarios=4)
    assert run.locked_at is not None and run.status == RunStatus.DONE
    assert run.findings.count() >= 4
    return run


def _ids(run: Run) -> list[int]:
    return list(run.findings.order_by("position").values_list("id", flat=True))


def _report_finding(report: dict[str, Any], finding_id: int) -> dict[str, Any]:
    return next(f for f in report["findings"] if f["id"] == finding_id)


# --------------------------------------------------------------------------- triage


def test_triage_is_append_only_and_the_newest_decision_wins_on_a_locked_run(
    locked_run: Run, reviewers: tuple[Any, Any]
) -> None:
    alice, bob = reviewers
    first, second = _ids(locked_run)[:2]
    # The run really is frozen by the database: its findings cannot change any more...
    with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
        RunFinding.objects.filter(id=first).update(rationale="edited")

    before = timezone.now()
    (row1,) = services.finding_triage(
        run=locked_run, finding_ids=[first], state="confirmed", note="  real bug  ", reviewer=alice
    )
    (row2,) = services.finding_triage(
        run=locked_run, finding_ids=[first], state="false_positive", note="KB says so", reviewer=bob
    )
    after = timezone.now()

    # ...while triage is recorded next to it: who, when, what, and the note (trimmed).
    assert (row1.reviewer, row1.state, row1.note) == (alice, "confirmed", "real bug")
    assert (row2.reviewer, row2.state) == (bob, "false_positive")
    assert before <= row1.created_at <= row2.created_at <= after
    history = list(FindingTriage.objects.filter(finding_id=first).order_by("id"))
    assert [(h.state, h.reviewer) for h in history] == [
        ("confirmed", alice),
        ("false_positive", bob),
    ]
    assert history[0].note == "real bug"  # the older decision is kept untouched

    latest = run_triage_latest(run=locked_run)
    assert set(latest) == {first}
    assert latest[first].id == row2.id

    report = report_json(locked_run)
    triaged = _report_finding(report, first)["triage"]
    assert triaged["state"] == "false_positive"
    assert triaged["note"] == "KB says so"
    assert triaged["reviewer"] == "bob"
    assert datetime.fromisoformat(triaged["at"]) == row2.created_at
    assert _report_finding(report, second)["triage"] == {
        "state": "open",
        "note": "",
        "reviewer": None,
        "at": None,
        "carried_from": None,
        "gate_waived": False,
    }
    locked_run.refresh_from_db()
    assert locked_run.locked_at is not None and locked_run.status == RunStatus.DONE


def test_bulk_triage_and_the_counts_in_the_report_summary(
    locked_run: Run, reviewers: tuple[Any, Any]
) -> None:
    alice, bob = reviewers
    ids = _ids(locked_run)
    total = len(ids)
    assert report_json(locked_run)["summary"]["triage"] == {
        "open": total,
        "confirmed": 0,
        "false_positive": 0,
        "fixed": 0,
        "wont_fix": 0,
    }

    rows = services.finding_triage(
        run=locked_run, finding_ids=[ids[2], ids[0], ids[1], ids[0]], state="fixed", reviewer=alice
    )
    assert [r.finding_id for r in rows] == sorted({ids[0], ids[1], ids[2]})
    assert all(r.reviewer == alice and r.state == "fixed" and r.pk for r in rows)
    services.finding_triage(run=locked_run, finding_ids=[ids[1]], state="wont_fix", reviewer=bob)
    services.finding_triage(run=locked_run, finding_ids=[ids[3]], state="confirmed", reviewer=bob)
    # Back to open is a decision too: it counts as open again.
    services.finding_triage(run=locked_run, finding_ids=[ids[2]], state="open", reviewer=bob)

    report = report_json(locked_run)
    assert report["summary"]["triage"] == {
        "open": total - 3,
        "confirmed": 1,
        "false_positive": 0,
        "fixed": 1,
        "wont_fix": 1,
    }
    assert sum(report["summary"]["triage"].values()) == total
    assert (
        count_triage_states(f["triage"]["state"] for f in report["findings"]).to_json()
        == report["summary"]["triage"]
    )
    states = {f["id"]: f["triage"]["state"] for f in report["findings"]}
    assert (states[ids[0]], states[ids[1]], states[ids[2]], states[ids[3]]) == (
        "fixed",
        "wont_fix",
        "open",
        "confirmed",
    )
    assert FindingTriage.objects.filter(run=locked_run).count() == 6


@pytest.mark.parametrize("state", ["closed", "", "FIXED", "false positive"])
def test_triage_rejects_an_unknown_state(locked_run: Run, state: str) -> None:
    with pytest.raises(ValueError, match="unknown triage state"):
        services.finding_triage(run=locked_run, finding_ids=_ids(locked_run)[:1], state=state)
    assert not FindingTriage.objects.exists()


def test_triage_rejects_findings_of_another_run_and_writes_nothing(
    locked_run: Run, demo_org: Organization
) -> None:
    other = start_run(demo_org, responder=INVENT, scenarios=1, seed=3)
    foreign = _ids(other)[0]
    mine = _ids(locked_run)[0]
    with pytest.raises(ValueError, match=rf"\[{foreign}\].*run {locked_run.id}"):
        services.finding_triage(run=locked_run, finding_ids=[mine, foreign], state="fixed")
    with pytest.raises(ValueError, match="not findings"):
        services.finding_triage(run=locked_run, finding_ids=[10**9], state="fixed")
    with pytest.raises(ValueError):
        services.finding_triage(run=locked_run, finding_ids=[], state="fixed")
    assert not FindingTriage.objects.exists()
    # The same finding through its own run is fine, and needs no logged-in reviewer.
    (row,) = services.finding_triage(
        run=other, finding_ids=[foreign], state="fixed", reviewer=AnonymousUser()
    )
    assert row.reviewer is None and row.run_id == other.id


# --------------------------------------------------------------------------- cancel


def test_cancel_a_queued_run_and_generation_then_does_nothing(
    demo_org: Organization, reviewers: tuple[Any, Any]
) -> None:
    run = services.run_create(organization=demo_org, scenarios=2, seed=1)
    assert services.run_cancel(run_id=run.id, user=reviewers[0]) is True
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.is_final
    assert run.finished_at is not None and "alice" in run.stage_detail

    dispatcher = RecordingDispatcher()
    services.run_generate(run_id=run.id, dispatcher=dispatcher)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert not run.artifacts.exists() and not run.cases.exists()
    assert dispatcher.calls == []
    assert run.tokens_used == 0
    # Cancelling twice: it is final already.
    assert services.run_cancel(run_id=run.id) is False


def test_cancel_a_simulating_run_cancels_queued_cases_and_later_stages_do_nothing(
    demo_org: Organization,
) -> None:
    run = generate_only(demo_org, scenarios=3)
    assert run.status == RunStatus.SIMULATING
    cases = list(run.cases.order_by("scenario_key"))
    dispatcher = RecordingDispatcher()
    services.case_simulate(case_id=cases[0].id, dispatcher=dispatcher)
    assert RunCase.objects.get(id=cases[0].id).status == CaseStatus.DONE
    played = RunTurn.objects.filter(case__run=run).count()
    assert played > 0

    assert services.run_cancel(run_id=run.id) is True
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and "a reviewer" in run.stage_detail
    statuses = dict(run.cases.values_list("scenario_key", "status"))
    assert statuses == {
        cases[0].scenario_key: CaseStatus.DONE,
        cases[1].scenario_key: CaseStatus.CANCELLED,
        cases[2].scenario_key: CaseStatus.CANCELLED,
    }
    assert all(c.finished_at for c in run.cases.filter(status=CaseStatus.CANCELLED))

    # Redelivered messages of every later stage find nothing to do.
    for case in cases:
        services.case_simulate(case_id=case.id, dispatcher=dispatcher)
    services.run_judge(run_id=run.id, dispatcher=dispatcher)
    services.run_report(run_id=run.id)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.verdict == "" and run.score_overall is None
    assert run.locked_at is not None  # cancelled with nothing in flight: locked, immutable
    assert not run.findings.exists() and not run.top_actions.exists()
    assert RunTurn.objects.filter(case__run=run).count() == played
    assert "judge" not in dispatcher.stages() and "report" not in dispatcher.stages()
    assert services.run_cancel(run_id=run.id) is False

    progress = run_get_progress(run=run)
    assert (progress["done"], progress["total"]) == (3, 3)
    assert [c["status"] for c in progress["cases"]] == ["done", "cancelled", "cancelled"]


def test_cancel_during_generation_stores_no_test_set(
    demo_org: Organization, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = generate.generate_artifacts

    def cancelled_meanwhile(*args: Any, **kwargs: Any) -> Any:
        run_id = Run.objects.get(status=RunStatus.GENERATING).id
        assert services.run_cancel(run_id=run_id) is True
        return real(*args, **kwargs)

    monkeypatch.setattr(generate, "generate_artifacts", cancelled_meanwhile)
    run = services.run_create(organization=demo_org, scenarios=2, seed=1)
    dispatcher = RecordingDispatcher()
    services.run_generate(run_id=run.id, dispatcher=dispatcher)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert not run.cases.exists() and not run.artifacts.exists()
    assert dispatcher.calls == []


def test_a_case_already_talking_stops_at_its_next_llm_call_and_the_run_is_never_judged(
    demo_org: Organization, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = generate_only(demo_org, scenarios=2)
    real = simulate.customer_next_message

    def cancel_on_first_message(*args: Any, **kwargs: Any) -> Any:
        services.run_cancel(run_id=run.id)
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate, "customer_next_message", cancel_on_first_message)
    first, second = run.cases.order_by("scenario_key")
    dispatcher = RecordingDispatcher()
    services.case_simulate(case_id=first.id, dispatcher=dispatcher)
    services.case_simulate(case_id=second.id, dispatcher=dispatcher)
    run.refresh_from_db()
    first.refresh_from_db()
    second.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    # The first case was cancelled while writing its first message: that call was refused.
    assert first.status == CaseStatus.CANCELLED and "the run ended" in first.error
    assert second.status == CaseStatus.CANCELLED and not second.turns.exists()
    assert not run.llm_calls.filter(role="simulator", status="reserved").exists()
    assert dispatcher.calls == []
    assert run.locked_at is not None  # nothing in flight any more


def test_cancel_refuses_a_final_or_reporting_run(demo_org: Organization) -> None:
    done = start_run(demo_org, scenarios=1)
    reporting = start_run(demo_org, scenarios=1, lock=False)
    assert reporting.status == RunStatus.REPORTING
    for run in (done, reporting):
        assert services.run_cancel(run_id=run.id) is False
    done.refresh_from_db()
    reporting.refresh_from_db()
    assert done.status == RunStatus.DONE and done.verdict
    assert reporting.status == RunStatus.REPORTING
    services.run_report(run_id=reporting.id)
    reporting.refresh_from_db()
    assert reporting.status == RunStatus.DONE and reporting.locked_at is not None


# --------------------------------------------------------------------------- delta


def _items(run: Run) -> dict[str, str]:
    """fingerprint -> most severe severity among the run's findings, computed independently."""
    order = {"critical": 0, "major": 1, "minor": 2}
    out: dict[str, str] = {}
    for fp, sev in run.findings.values_list("fingerprint", "severity"):
        if fp not in out or order[sev] < order[out[fp]]:
            out[fp] = sev
    return out


def _sev(items: dict[str, str], fps: set[str]) -> dict[str, int]:
    return {s: sum(1 for fp in fps if items[fp] == s) for s in ("critical", "major", "minor")}


@pytest.fixture
def delta_runs(demo_org: Organization) -> tuple[Run, Run, Run]:
    """One test set, three responders: reference, a price-inventing canary, and that canary
    that also garbles an extracted field (both replay the first run's artifacts)."""
    base = start_run(demo_org, seed=18)
    invent = start_run(demo_org, responder=INVENT, reuse_artifacts=base.id)
    both = start_run(demo_org, responder=f"{INVENT}+wrong_extraction", reuse_artifacts=base.id)
    return base, invent, both


def test_delta_against_a_chosen_run_after_a_responder_change(
    delta_runs: tuple[Run, Run, Run],
) -> None:
    base, invent, _ = delta_runs
    assert delta_json(base) is None  # nothing reported before it
    # A canary run is one of the lab's own: it has no default baseline, only a chosen one.
    assert delta_json(invent) is None

    delta = delta_json(invent, other=base)
    assert delta is not None
    assert delta["previous_run_id"] == base.id and delta["basis"] == "chosen"
    assert delta["basis_reason"] == "chosen by the reviewer"

    now, then = _items(invent), _items(base)
    new, resolved, persisting = set(now) - set(then), set(then) - set(now), set(now) & set(then)
    assert new, "the canary's invented price must show up as new findings"
    findings = delta["findings"]
    assert set(findings["new_fingerprints"]) == new
    assert findings["new_fingerprints"] == sorted(findings["new_fingerprints"])
    assert set(findings["resolved_fingerprints"]) == resolved
    assert findings["new"] == _sev(now, new)
    assert findings["resolved"] == _sev(then, resolved)
    assert findings["persisting"] == _sev(now, persisting)
    assert findings["new"]["critical"] >= 1
    counts = {i["fingerprint"]: i["count"] for i in findings["items"]["new"]}
    for fp, count in counts.items():
        assert count == invent.findings.filter(fingerprint=fp).count()
    for item in findings["items"]["new"]:
        row = RunFinding.objects.get(id=item["finding_id"])
        assert (row.run_id, row.fingerprint, row.severity) == (
            invent.id,
            item["fingerprint"],
            item["severity"],
        )

    assert invent.verdict == Verdict.FAIL_CRITICAL
    assert delta["verdict"] == {
        "previous": base.verdict,
        "current": Verdict.FAIL_CRITICAL,
        "changed": base.verdict != Verdict.FAIL_CRITICAL,
    }
    assert delta["verdict"]["changed"] is True

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    assert delta["score_values"]["overall"] == {
        "previous": r(base.score_overall),
        "current": r(invent.score_overall),
        "change": round(r(invent.score_overall) - r(base.score_overall), 4),
    }
    assert delta["score_values"]["groundedness"]["change"] < 0
    assert delta["scores"] == {k: v["change"] for k, v in delta["score_values"].items()}

    # The replayed test set costs no generation tokens: the delta shows the saving.
    assert invent.tokens_used < base.tokens_used
    assert delta["tokens"] == invent.tokens_used - base.tokens_used < 0
    assert delta["token_values"] == {
        "previous": base.tokens_used,
        "current": invent.tokens_used,
        "change": delta["tokens"],
    }

    changed = delta["changed_inputs"]
    assert changed["responder"] is True
    assert changed["test_set_identical"] is True
    # The responder is named apart and the reused run's id is not a setting.
    assert changed["settings"] is False and changed["settings_changed"] == []
    assert changed["org_context"] is False
    assert changed["engine"] is False and changed["engine_or_models"] is False
    assert changed["models"] == [] and changed["kb_documents"] == [] and changed["prompts"] == []
    assert changed["code_version"] is False
    assert delta["snapshots"]["previous"]["run_id"] == base.id
    assert delta["snapshots"]["previous"]["responder"] == "reference"
    assert delta["snapshots"]["current"]["responder"] == INVENT

    # The report carries the default delta: none for a canary run.
    assert report_json(invent)["delta"] is None


def test_delta_new_resolved_persisting_and_a_chosen_run(
    delta_runs: tuple[Run, Run, Run],
) -> None:
    base, invent, both = delta_runs
    garbled = set(_items(both)) - set(_items(invent))
    assert garbled, "wrong_extraction must add a finding of its own"
    assert set(_items(invent)) <= set(_items(both))

    delta = delta_json(both, other=invent)
    assert delta is not None and delta["previous_run_id"] == invent.id
    assert set(delta["findings"]["new_fingerprints"]) == garbled
    assert delta["findings"]["resolved_fingerprints"] == []
    persisting = {i["fingerprint"] for i in delta["findings"]["items"]["persisting"]}
    assert persisting == set(_items(invent))
    assert delta["findings"]["persisting"] == _sev(_items(both), persisting)
    assert delta["verdict"]["changed"] is False
    assert delta["changed_inputs"]["responder"] is True
    assert delta["tokens"] == both.tokens_used - invent.tokens_used

    # Compared by hand with the older, narrower canary run: what it had is resolved.
    back = delta_json(invent, other=both)
    assert back is not None
    assert back["basis"] == "chosen" and back["previous_run_id"] == both.id
    assert set(back["findings"]["resolved_fingerprints"]) == garbled
    assert back["findings"]["new_fingerprints"] == []
    assert back["findings"]["resolved"] == _sev(_items(both), garbled)
    assert back["snapshots"]["previous"]["run_id"] == both.id

    # And with the clean reference run: all findings new, the same test set, the same settings
    # except the responder.
    chosen = delta_json(both, other=base)
    assert chosen is not None and chosen["basis"] == "chosen"
    assert chosen["previous_run_id"] == base.id
    assert set(chosen["findings"]["new_fingerprints"]) == set(_items(both)) - set(_items(base))
    assert chosen["changed_inputs"]["test_set_identical"] is True


def test_delta_of_a_freshly_generated_test_set_is_not_identical(demo_org: Organization) -> None:
    first = start_run(demo_org, scenarios=1, seed=18)
    second = start_run(demo_org, scenarios=1, seed=19)
    delta = delta_json(second)
    assert delta is not None and delta["previous_run_id"] == first.id
    assert delta["changed_inputs"]["test_set_identical"] is False
    assert delta["changed_inputs"]["responder"] is False
    # The seed is not a setting: it changed the test set, which the delta says.
    assert delta["changed_inputs"]["settings"] is False
    assert delta["changed_inputs"]["settings_changed"] == []
    assert delta["basis"] == "previous"


def test_delta_candidates_are_the_orgs_reported_runs_newest_first(
    delta_runs: tuple[Run, Run, Run],
) -> None:
    base, invent, both = delta_runs
    other_org = Organization.objects.create(slug="other", name="Other", locale="en_IE")
    foreign = bare_run(other_org, status=RunStatus.DONE, locked_at=timezone.now())
    queued = services.run_create(organization=base.organization, scenarios=1, seed=1)

    got = run_delta_candidates(run=invent, runs=Run.objects.all())
    # A real bot's runs first, then the lab's own (flagged by Run.probe), each newest first.
    assert [(r.id, r.probe) for r in got] == [(base.id, ""), (both.id, "canary")]
    assert foreign.id not in {r.id for r in got} and queued.id not in {r.id for r in got}
    limited = run_delta_candidates(run=both, runs=Run.objects.all(), limit=1)
    assert [r.id for r in limited] == [base.id, invent.id]  # at most `limit` of each kind
    # A candidate (loaded with few fields) compares like the full row.
    assert delta_json(invent, other=got[1]) == delta_json(invent, other=Run.objects.get(id=both.id))
    # Only runs the caller may see (the queryset it passes).
    assert run_delta_candidates(run=invent, runs=Run.objects.exclude(id=both.id)) == [base]
    assert run_delta_candidates(run=invent, runs=Run.objects.none()) == []


# --------------------------------------------------------------------------- progress


def test_progress_lists_every_case_with_done_total_and_tokens(demo_org: Organization) -> None:
    run = generate_only(demo_org, scenarios=3)
    first = run.cases.order_by("scenario_key").first()
    assert first is not None
    services.case_simulate(case_id=first.id, dispatcher=RecordingDispatcher())
    run.refresh_from_db()

    progress = run_get_progress(run=run)
    assert progress["status"] == RunStatus.SIMULATING
    assert (progress["done"], progress["total"]) == (1, 3)
    assert [c["id"] for c in progress["cases"]] == ["sc-01", "sc-02", "sc-03"]
    assert [c["status"] for c in progress["cases"]] == ["done", "queued", "queued"]
    assert progress["cases"][0]["turns"] == first.turns.count() > 0
    assert [c["turns"] for c in progress["cases"][1:]] == [0, 0]
    assert progress["cases"][0]["elapsed"] is not None and progress["cases"][1]["elapsed"] is None
    assert progress["tokens"] == {
        "used": run.tokens_used,
        "budget": run.token_budget,
        "pct": round(100 * run.tokens_used / run.token_budget),
        "bot_used": run.responder_tokens_used,
        "bot_budget": run.responder_token_budget,
    }
    assert 0 < progress["tokens"]["pct"] < 100
    run.tokens_used = run.token_budget * 3  # never drawn past the end of the bar
    assert run_get_progress(run=run)["tokens"]["pct"] == 100


def _count_queries(fn: Callable[[], Any]) -> int:
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


def test_progress_query_count_does_not_grow_with_cases(
    demo_org: Organization, django_assert_max_num_queries: Any
) -> None:
    small = generate_only(demo_org, scenarios=2, seed=1)
    large = generate_only(demo_org, scenarios=9, seed=2)
    for case in large.cases.all()[:4]:
        services.case_simulate(case_id=case.id, dispatcher=RecordingDispatcher())
    large.refresh_from_db()
    with django_assert_max_num_queries(2):
        progress = run_get_progress(run=large)
    assert (progress["done"], progress["total"]) == (4, 9)
    assert _count_queries(lambda: run_get_progress(run=small)) == _count_queries(
        lambda: run_get_progress(run=large)
    )


# --------------------------------------------------------------------------- case view


def test_the_case_view_marks_quotes_in_their_turn_and_compares_fields(
    delta_runs: tuple[Run, Run, Run], reviewers: tuple[Any, Any]
) -> None:
    base, _, run = delta_runs
    case = run.cases.get(scenario_type="booking_full_intake")
    alice, bob = reviewers
    finding = case.findings.order_by("position").first()
    assert finding is not None
    services.finding_triage(run=run, finding_ids=[finding.id], state="confirmed", reviewer=alice)
    services.finding_triage(run=run, finding_ids=[finding.id], state="fixed", reviewer=bob)

    data = run_get_case(run=run, case=case)
    turns = {t["index"]: t for t in data["turns"]}
    assert sorted(turns) == list(range(case.turns.count()))

    marked = set()
    for f in case.findings.all():
        for ev in f.evidence:
            if ev["source"] not in ("reply", "customer"):
                continue
            turn = f.turn_index if ev.get("turn") is None else ev["turn"]
            side = "reply_marks" if ev["source"] == "reply" else "customer_marks"
            text = turns[turn]["reply" if ev["source"] == "reply" else "customer"]
            assert (ev["quote"], f.id) in turns[turn][side]
            assert ev["quote"] in text
            # ...and in no other turn (a merged finding may quote the same words in several).
            cited = {
                f.turn_index if e.get("turn") is None else e["turn"]
                for e in f.evidence
                if e["source"] == ev["source"] and e["quote"] == ev["quote"]
            }
            others = [t for i, t in turns.items() if i not in cited]
            assert all((ev["quote"], f.id) not in t[side] for t in others)
            marked.add(ev["source"])
    assert marked == {"reply", "customer"}
    # A customer quote is marked on the customer's side only, and the other way round.
    for t in data["turns"]:
        for quote, _ in t["customer_marks"]:
            assert quote in t["customer"]
        for quote, _ in t["reply_marks"]:
            assert quote in t["reply"]

    def last_extracted(c: RunCase) -> dict[str, tuple[str, int]]:
        out: dict[str, tuple[str, int]] = {}
        for t in c.turns.order_by("index"):
            for k, v in t.extracted.items():
                if str(v).strip():
                    out[k] = (str(v), t.index)
        return out

    fields = {f["key"]: f for f in data["fields"]}
    blueprint = data["blueprint"]
    assert blueprint is not None and blueprint.key == case.scenario_key
    for key, value in blueprint.persona.facts.items():
        assert fields[key]["persona"] == value
    extracted = last_extracted(case)
    assert extracted, "a booking case extracts fields"
    for key, (value, index) in extracted.items():
        assert (fields[key]["extracted"], fields[key]["extracted_turn"]) == (value, index)
    # wrong_extraction garbles every field it extracts; each mismatch is also a finding.
    garbled = {k for k, f in fields.items() if f["match"] is False}
    assert garbled == set(extracted)
    # A finding names the field by the value it quotes as extracted (its subject is verbatim).
    field_of = {(f["extracted"], f["extracted_turn"]): k for k, f in fields.items()}
    assert garbled == {
        field_of[(ev["quote"], ev["turn"])]
        for finding in case.findings.filter(rule_id="extraction_accuracy")
        for ev in finding.evidence
        if ev["source"] == "extracted"
    }
    # The reference responder on the same test set extracts them right.
    clean_case = base.cases.get(scenario_key=case.scenario_key)
    clean = {f["key"]: f for f in run_get_case(run=base, case=clean_case)["fields"]}
    assert {k for k, f in clean.items() if f["match"] is True} == set(last_extracted(clean_case))
    assert all(clean[k]["persona"] == fields[k]["persona"] for k in clean)
    assert all(f["match"] is None for k, f in clean.items() if f["extracted"] is None)

    assert data["fixture"] is not None and data["fixture"].key == case.fixture_key
    artifact = RunArtifact.objects.get(run=run, kind="fixture", key=case.fixture_key)
    assert data["fixture_artifact"].sha256 == artifact.sha256
    assert data["promotion"] is None

    rows = {r["finding"].id: r for r in data["findings"]}
    assert set(rows) == set(case.findings.values_list("id", flat=True))
    assert [h.state for h in rows[finding.id]["history"]] == ["fixed", "confirmed"]
    assert rows[finding.id]["triage"].state == "fixed"
    assert rows[finding.id]["triage"].reviewer == bob
    severities = [r["finding"].severity for r in data["findings"]]
    assert severities == sorted(severities, key=["critical", "major", "minor"].index)


# --------------------------------------------------------------------------- report queries


def _triage_some(run: Run, reviewers: tuple[Any, Any], states: list[str]) -> None:
    ids = _ids(run)
    for i, state in enumerate(states):
        if not ids[i::5]:
            continue  # a small run may have fewer findings than states
        services.finding_triage(
            run=run, finding_ids=ids[i::5], state=state, reviewer=reviewers[i % 2]
        )


def test_report_query_count_does_not_grow_with_findings(
    demo_org: Organization,
    reviewers: tuple[Any, Any],
    django_assert_max_num_queries: Any,
    admin_client: Any,
) -> None:
    # One real bot that invents a price, three runs: both measured ones have a delta.
    bot = "python:tests.responders:judge_injector"
    # The same test set throughout, so each measured run's delta makes the same paired test.
    start_run(demo_org, preset="regression", responder=bot, seed=18)
    small = start_run(demo_org, preset="regression", responder=bot, seed=18)
    held = start_run(demo_org, preset="regression", responder=bot, seed=18, lock=False)
    add_findings(held, 240)
    services.run_report(run_id=held.id)
    big = Run.objects.get(id=held.id)
    assert big.locked_at is not None and big.preset == "regression"
    assert big.findings.count() >= 200
    assert small.findings.count() < 20

    states = [TriageState.CONFIRMED, TriageState.FALSE_POSITIVE, TriageState.WONT_FIX]
    _triage_some(small, reviewers, states)
    _triage_some(big, reviewers, states)
    assert FindingTriage.objects.filter(run=big).count() >= 100

    small = Run.objects.get(id=small.id)
    big = Run.objects.get(id=big.id)
    small_queries = _count_queries(lambda: report_json(small))
    big = Run.objects.get(id=big.id)
    with django_assert_max_num_queries(small_queries):
        report = report_json(big)
    assert len(report["findings"]) == big.findings.count()
    assert report["delta"] is not None
    assert sum(report["summary"]["triage"].values()) == len(report["findings"])
    assert report["summary"]["triage"]["open"] < len(report["findings"])
    assert {f["triage"]["reviewer"] for f in report["findings"]} == {"alice", "bob", None}
    # 20, one for the delta's paired test (same test set), one for the misses reviewers added,
    # one for the organization's triage labels (the counts corrected by measured precision)
    assert small_queries <= 23

    # The report page itself (findings grouped, triage states, actions, snapshot, delta).
    def page(run: Run) -> Any:
        return admin_client.get(reverse("admin:runs_run_report", args=[run.id]))

    page(small)  # warm the session and content-type caches
    small_page_queries = _count_queries(lambda: page(small))
    with django_assert_max_num_queries(small_page_queries):
        response = page(big)
    assert response.status_code == 200
    assert response.content.decode().count('class="qa-finding ') >= 200
