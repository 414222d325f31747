"""Triage carries over by fingerprint (issue 17): a finding the organization already triaged in
an earlier run comes back with that decision, not `open`; the report counts new / carried /
resolved; a carried "does not fail the gate" decision keeps a critical from failing a later run.

Runs are real (offline engine, inline) against a bot defined here: a real bot's runs (not a
canary), so the delta's baseline (same organization, preset and responder) is the earlier run.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

from qalab.models import Organization
from runs import services
from runs.forms import TriageForm
from runs.models import FindingTriage, Run, Verdict
from tests.runs.helpers import report_json, start_run

pytestmark = pytest.mark.django_db

BOT = "python:tests.runs.test_triage_carry:bot"
# Version 1 invents a price (critical) and asks three questions at once (repeated every turn);
# version 2 still invents the price but asks nothing specific.
V1 = (
    "A check-up is 17.35 EUR. What is your full name? What is your phone number? "
    "Which service do you need?"
)
V2 = "A check-up is 17.35 EUR. What else can I help you with?"
_REPLY = {"text": V1}


def bot(request: dict[str, Any]) -> dict[str, Any]:
    """The bot under test: it answers with the current version's reply, whatever is asked."""
    return {"reply": _REPLY["text"], "status": "AWAITING_RESPONSE", "extracted": {}}


@pytest.fixture(autouse=True)
def _version_1() -> Any:
    _REPLY["text"] = V1
    yield
    _REPLY["text"] = V1


@pytest.fixture
def reviewers(django_user_model: Any) -> tuple[Any, Any]:
    return (
        django_user_model.objects.create_user(username="alice", password="pw-123456"),
        django_user_model.objects.create_user(username="bob", password="pw-123456"),
    )


def _first_run(org: Organization) -> Run:
    run = start_run(org, responder=BOT, scenarios=2)
    assert run.locked_at is not None and run.verdict == Verdict.FAIL_CRITICAL
    return run


def _next_run(run: Run, *, version: str = V1) -> Run:
    """A run of the same bot (at `version`) on `run`'s test set."""
    _REPLY["text"] = version
    nxt = start_run(run.organization, responder=BOT, reuse_artifacts=run.id)
    assert nxt.locked_at is not None
    return nxt


def _ids(run: Run, rule: str, subject: str = "") -> list[int]:
    rows = run.findings.filter(rule_id=rule, subject__startswith=subject).order_by("position")
    ids = list(rows.values_list("id", flat=True))
    assert ids, f"run {run.id} has no {rule} finding on {subject!r}"
    return ids


def _price(run: Run) -> list[int]:
    return _ids(run, "unsupported_facts", "17.35")


def _triage_of(report: dict[str, Any], ids: list[int]) -> list[dict[str, Any]]:
    by_id = {f["id"]: f["triage"] for f in report["findings"]}
    return [by_id[i] for i in ids]


def _markdown(run: Run) -> str:
    from runs.report.build import report_build
    from runs.report.markdown import report_to_markdown

    return report_to_markdown(report_build(run=run))


def test_a_false_positive_comes_back_carried_not_open(
    demo_org: Organization, reviewers: tuple[Any, Any], admin_client: Any
) -> None:
    alice, _ = reviewers
    run1 = _first_run(demo_org)
    services.finding_triage(
        run=run1,
        finding_ids=_price(run1),
        state="false_positive",
        note="the promo price is in the flyer",
        reviewer=alice,
    )

    run2 = _next_run(run1)
    report = report_json(run2)
    carried = _triage_of(report, _price(run2))
    assert len(carried) == 2
    for t in carried:
        assert t["state"] == "false_positive"
        assert t["note"] == "the promo price is in the flyer"
        assert t["reviewer"] == "alice"
        assert t["carried_from"] == run1.id
        assert t["gate_waived"] is False
    # The decision's time is when alice made it, in run 1.
    made = {r.created_at.isoformat() for r in FindingTriage.objects.filter(run=run1)}
    assert {t["at"] for t in carried} <= made
    # Everything else is new and open.
    others = [f["triage"] for f in report["findings"] if f["id"] not in _price(run2)]
    assert others and all(t["state"] == "open" and t["carried_from"] is None for t in others)
    rows = FindingTriage.objects.filter(run=run2)
    assert {(r.finding_id, r.carried_from_run, r.reviewer_id) for r in rows} == {
        (i, run1.id, alice.id) for i in _price(run2)
    }
    # A false positive without the gate option still fails the gate: the price is critical.
    assert run2.verdict == Verdict.FAIL_CRITICAL
    assert report["summary"]["triage"]["false_positive"] == 2

    # Markdown and page say where the decision comes from.
    markdown = _markdown(run2)
    assert f"Triage: false positive by alice, carried from run {run1.id}" in markdown
    page = admin_client.get(reverse("admin:runs_run_report", args=[run2.id])).content.decode()
    assert f">carried from run {run1.id}</a>" in page
    assert 'name="gate_waived"' in page and "This run is locked: its verdict does not change" in (
        page
    )
    case = run2.findings.get(id=_price(run2)[0]).case
    assert case is not None
    case_page = admin_client.get(
        reverse("admin:runs_run_case", args=[run2.id, case.scenario_key])
    ).content.decode()
    assert f">carried from run {run1.id}</a>" in case_page and 'name="gate_waived"' in case_page


def test_new_carried_and_resolved_counts(
    demo_org: Organization, reviewers: tuple[Any, Any]
) -> None:
    alice, bob = reviewers
    run1 = _first_run(demo_org)
    services.finding_triage(run=run1, finding_ids=_price(run1), state="wont_fix", reviewer=alice)
    # Two fingerprints version 2 no longer shows: triaged, so they count as resolved.
    services.finding_triage(
        run=run1,
        finding_ids=_ids(run1, "repeated_question", "What is your full name"),
        state="false_positive",
        reviewer=alice,
    )
    services.finding_triage(
        run=run1, finding_ids=_ids(run1, "questions_per_turn"), state="confirmed", reviewer=bob
    )
    # Gone too, but its newest decision is `open`: not triaged, not resolved.
    phone = _ids(run1, "repeated_question", "What is your phone")
    services.finding_triage(run=run1, finding_ids=phone, state="fixed", reviewer=bob)
    services.finding_triage(run=run1, finding_ids=phone, state="open", reviewer=bob)

    run2 = _next_run(run1, version=V2)
    report = report_json(run2)
    total = len(report["findings"])
    assert total > 2
    gone = {
        run1.findings.get(id=_ids(run1, "repeated_question", "What is your full name")[0]),
        run1.findings.get(id=_ids(run1, "questions_per_turn")[0]),
    }
    assert report["summary"]["carry"] == {
        "new": total - 2,
        "carried": 2,
        "resolved": 2,
        "baseline_run_id": run1.id,
        "resolved_fingerprints": sorted(f.fingerprint for f in gone),
        "gate_waived": 0,
    }
    assert [t["carried_from"] for t in _triage_of(report, _price(run2))] == [run1.id, run1.id]

    markdown = _markdown(run2)
    assert (
        f"Triage: new {total - 2} · carried 2 (decided in an earlier run) · resolved 2 "
        f"(triaged in run {run1.id}, gone now)."
    ) in markdown
    # The first run had nothing before it.
    first = report_json(run1)["summary"]["carry"]
    assert (first["carried"], first["resolved"], first["baseline_run_id"]) == (0, 0, None)
    assert first["new"] == len(report_json(run1)["findings"])


def test_open_is_never_carried(demo_org: Organization, reviewers: tuple[Any, Any]) -> None:
    alice, bob = reviewers
    run1 = _first_run(demo_org)
    # A decision taken back: its newest word is `open`, and no older decision shows through.
    services.finding_triage(run=run1, finding_ids=_price(run1), state="wont_fix", reviewer=alice)
    services.finding_triage(run=run1, finding_ids=_price(run1), state="open", reviewer=bob)
    # And `open` set straight away.
    full_name = _ids(run1, "repeated_question", "What is your full name")
    services.finding_triage(run=run1, finding_ids=full_name, state="open", reviewer=bob)

    run2 = _next_run(run1)
    assert not FindingTriage.objects.filter(run=run2).exists()
    report = report_json(run2)
    assert all(
        f["triage"]["state"] == "open" and f["triage"]["carried_from"] is None
        for f in report["findings"]
    )
    carry = report["summary"]["carry"]
    assert (carry["new"], carry["carried"]) == (len(report["findings"]), 0)


def test_the_newest_decision_by_time_wins_and_names_the_run_it_was_made_in(
    demo_org: Organization, reviewers: tuple[Any, Any]
) -> None:
    alice, bob = reviewers
    run1 = _first_run(demo_org)
    services.finding_triage(run=run1, finding_ids=_price(run1), state="wont_fix", reviewer=alice)
    run2 = _next_run(run1)
    # Carried twice, it still names the run where the decision was made.
    run3 = _next_run(run2)
    assert {t["carried_from"] for t in _triage_of(report_json(run3), _price(run3))} == {run1.id}

    # bob re-decides in run 2: a later run carries his decision, from run 2.
    services.finding_triage(run=run2, finding_ids=_price(run2), state="confirmed", reviewer=bob)
    run4 = _next_run(run3)
    assert {
        (t["state"], t["reviewer"], t["carried_from"])
        for t in _triage_of(report_json(run4), _price(run4))
    } == {("confirmed", "bob", run2.id)}

    # Then alice re-decides in the older run 1: newer by time, so hers wins.
    services.finding_triage(
        run=run1, finding_ids=_price(run1), state="false_positive", reviewer=alice
    )
    run5 = _next_run(run4)
    assert {
        (t["state"], t["reviewer"], t["carried_from"])
        for t in _triage_of(report_json(run5), _price(run5))
    } == {("false_positive", "alice", run1.id)}


def test_another_organizations_triage_never_carries(
    demo_org: Organization, reviewers: tuple[Any, Any]
) -> None:
    from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
    from qalab.orgs import organization_import

    alice, _ = reviewers
    context = load_org_folder(DEMO_ORG_DIR).model_copy(update={"slug": "other", "name": "Other"})
    other, _ = organization_import(context=context)
    theirs = _first_run(other)
    services.finding_triage(
        run=theirs,
        finding_ids=_price(theirs),
        state="wont_fix",
        reviewer=alice,
        gate_waived=True,
    )

    mine = _first_run(demo_org)
    assert set(mine.findings.values_list("fingerprint", flat=True)) & set(
        theirs.findings.values_list("fingerprint", flat=True)
    ), "the same defects: only the organization differs"
    assert not FindingTriage.objects.filter(run=mine).exists()
    assert mine.verdict == Verdict.FAIL_CRITICAL
    assert report_json(mine)["summary"]["carry"]["carried"] == 0
    # Within the other organization it does carry.
    assert _next_run(theirs).verdict == Verdict.PASS_WITH_FINDINGS


@pytest.mark.parametrize("gate_waived", [True, False])
def test_a_carried_wont_fix_with_the_gate_option_does_not_fail_the_next_run(
    demo_org: Organization, reviewers: tuple[Any, Any], gate_waived: bool
) -> None:
    alice, bob = reviewers
    run1 = _first_run(demo_org)
    (row, _) = services.finding_triage(
        run=run1,
        finding_ids=_price(run1),
        state="wont_fix",
        note="the promo runs till June",
        reviewer=alice,
        gate_waived=gate_waived,
    )
    # Audited: on the decision's row, with its reviewer and time.
    assert (row.gate_waived, row.reviewer, row.created_at is not None) == (gate_waived, alice, True)
    # Triaging after the lock does not change the run's own verdict.
    run1.refresh_from_db()
    assert run1.verdict == Verdict.FAIL_CRITICAL

    run2 = _next_run(run1)
    report = report_json(run2)
    assert report["summary"]["findings"]["critical"] == 2
    assert {t["gate_waived"] for t in _triage_of(report, _price(run2))} == {gate_waived}
    if gate_waived:
        assert run2.verdict == Verdict.PASS_WITH_FINDINGS
        assert run2.verdict_reason.startswith(
            f"2 critical findings waived by alice's won't fix in run {run1.id} "
            "(not failing the gate); "
        )
        assert re.search(r"\d+ major and \d+ minor findings$", run2.verdict_reason)
        assert report["summary"]["carry"]["gate_waived"] == 2
        assert "2 critical waived by a carried decision" in _markdown(run2)
        # A reviewer in run 2 cannot take the waiver back for run 2: its verdict is final...
        services.finding_triage(run=run2, finding_ids=_price(run2), state="confirmed", reviewer=bob)
        run2.refresh_from_db()
        assert run2.verdict == Verdict.PASS_WITH_FINDINGS
        # ...but the next run carries bob's newer decision, and fails.
        assert _next_run(run2).verdict == Verdict.FAIL_CRITICAL
    else:
        assert run2.verdict == Verdict.FAIL_CRITICAL
        assert "waived" not in run2.verdict_reason
        assert report["summary"]["carry"]["gate_waived"] == 0


@pytest.mark.parametrize("state", ["confirmed", "fixed", "open"])
def test_the_gate_option_with_another_state_is_refused(
    demo_org: Organization, reviewers: tuple[Any, Any], admin_client: Any, state: str
) -> None:
    alice, _ = reviewers
    run1 = _first_run(demo_org)
    with pytest.raises(ValueError, match="only for won't fix or false positive"):
        services.finding_triage(
            run=run1, finding_ids=_price(run1), state=state, reviewer=alice, gate_waived=True
        )
    form = TriageForm({"finding": [str(_price(run1)[0])], "state": state, "gate_waived": "on"})
    assert not form.is_valid() and "gate_waived" in form.errors
    assert TriageForm(
        {"finding": [str(_price(run1)[0])], "state": "false_positive", "gate_waived": "on"}
    ).is_valid()

    response = admin_client.post(
        reverse("admin:runs_run_triage", args=[run1.id]),
        {"finding": _price(run1)[0], "state": state, "gate_waived": "on"},
        follow=True,
    )
    assert "only for won" in response.content.decode()
    assert not FindingTriage.objects.exists()
