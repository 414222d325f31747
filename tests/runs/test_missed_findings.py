"""Defects the judge missed, added by a reviewer on a turn of a locked run (issue 36, point 2;
acceptance 2): the run's rows stay as they were (the triggers still refuse edits), the quote is
checked against the turn, the report shows the miss and the verdict it would have had, and the
organization's next run of a bot that still says it carries it.

Runs are real (offline engine, inline) against a bot defined here, a real bot's: its reply says
something the judge does not catch ("Parking is free behind the building": the KB says nothing
of parking), the miss a reviewer adds.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from qalab.models import Organization
from runs import services
from runs.inline import InlineDispatcher
from runs.models import MissedFinding, Run, RunCase, RunFinding, RunTopAction, RunTurn, Verdict
from runs.report.build import report_build
from runs.report.markdown import report_to_markdown
from runs.services.missed import (
    MissedFindingError,
    add_missed_finding,
    missed_fingerprint,
)
from tests.factories import make_staff_user
from tests.runs.helpers import AS_OF, report_json

pytestmark = pytest.mark.django_db

BOT = "python:tests.runs.test_missed_findings:bot"
MISSED = "Parking is free behind the building."
V1 = f"Thanks! {MISSED} What is your full name?"
V2 = "Thanks! What is your full name?"  # the fix: it no longer says it
_REPLY = {"text": V1}


def bot(request: dict[str, Any]) -> dict[str, Any]:
    """The bot under test: the current version's reply, whatever is asked."""
    return {"reply": _REPLY["text"], "status": "AWAITING_RESPONSE", "extracted": {}}


@pytest.fixture(autouse=True)
def _version_1() -> Any:
    _REPLY["text"] = V1
    yield
    _REPLY["text"] = V1


def _run(org: Organization, *, reuse: Run | None = None, purpose: str = "check") -> Run:
    """A locked run of the bot (a fresh test set of 2 scenarios, or `reuse`'s)."""
    run = services.run_create(
        organization=org,
        responder_spec=BOT,
        scenarios=None if reuse else 2,
        seed=18,
        as_of=None if reuse else AS_OF,
        reuse_artifacts=reuse.pk if reuse else None,
        purpose=purpose,
    )
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    assert run.locked_at is not None
    return run


@pytest.fixture
def run(demo_org: Organization) -> Run:
    run = _run(demo_org)
    # The judge found majors and minors, but no invented fact (the parking): no critical.
    assert run.verdict == Verdict.PASS_WITH_FINDINGS
    assert run.findings.exists()
    assert not run.findings.filter(rule_id="unsupported_facts").exists()
    return run


@pytest.fixture
def alice(django_user_model: Any, demo_org: Organization) -> Any:
    user = make_staff_user(django_user_model, username="alice", perms=("qalab.triage_finding",))
    demo_org.members.add(user)
    return user


def _case(run: Run) -> RunCase:
    return run.cases.order_by("scenario_key", "trial").first()


def _add(run: Run, user: Any, **kw: Any) -> MissedFinding:
    fields: dict[str, Any] = {
        "turn_index": 0,
        "rule_id": "unsupported_facts",
        "other_text": "",
        "severity": "critical",
        "quote": MISSED,
        "note": "the KB says nothing of parking",
    }
    fields.update(kw)
    return add_missed_finding(run=run, case=_case(run), user=user, **fields).missed


def _rows(run: Run) -> dict[str, Any]:
    """Everything of the run that is its own (the rows its triggers freeze)."""
    return {
        "run": Run.objects.filter(pk=run.pk).values().get(),
        "findings": list(RunFinding.objects.filter(run=run).order_by("id").values()),
        "cases": list(RunCase.objects.filter(run=run).order_by("id").values()),
        "turns": list(RunTurn.objects.filter(case__run=run).order_by("id").values()),
        "top_actions": list(RunTopAction.objects.filter(run=run).order_by("id").values()),
    }


def test_a_miss_on_a_locked_run_leaves_the_run_as_it_was(run: Run, alice: Any) -> None:
    before = _rows(run)
    miss = _add(run, alice)
    assert (miss.run_id, miss.turn_index, miss.severity, miss.quote) == (
        run.pk,
        0,
        "critical",
        MISSED,
    )
    assert miss.reviewer == alice and miss.carried_from_run is None
    assert miss.fingerprint == missed_fingerprint("unsupported_facts", "", MISSED)
    # The run's own rows, verdict and scores included, are what they were.
    assert _rows(run) == before
    run.refresh_from_db()
    assert run.verdict == Verdict.PASS_WITH_FINDINGS and run.locked_at is not None
    # ... and still locked: the database refuses an edit of one of its findings.
    if connection.vendor != "postgresql":
        pytest.skip("database triggers are Postgres-only")
    finding = run.findings.first()
    with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
        RunFinding.objects.filter(pk=finding.pk).update(severity="critical")
    assert RunFinding.objects.get(pk=finding.pk).severity == finding.severity


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"quote": "Parking is free in the garden."}, "quote", "does not say this"),
        ({"quote": "   "}, "quote", "Select or paste"),
        ({"quote": MISSED + " x" * 260}, "quote", "keep it to 500"),
        ({"turn_index": 99}, "turn_index", "has no turn 99"),
        ({"rule_id": "no_such_rule"}, "rule_id", "not a rule of the catalog"),
        ({"rule_id": "case_error"}, "rule_id", "not a rule of the catalog"),
        ({"rule_id": "other", "other_text": " "}, "other_text", "what the judge missed"),
        ({"severity": "blocker"}, "severity", "critical, major, minor"),
    ],
)
def test_a_miss_is_refused_with_what_is_wrong(
    run: Run, alice: Any, fields: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(MissedFindingError, match=words) as refused:
        _add(run, alice, **fields)
    assert refused.value.field == field
    assert not MissedFinding.objects.exists()


def test_the_quote_is_the_turns_own_words(run: Run, alice: Any) -> None:
    case = _case(run)
    customer_1 = case.turns.get(index=1).customer_message
    # Another turn's words are not this turn's.
    with pytest.raises(MissedFindingError, match="Turn 0 does not say this"):
        _add(run, alice, quote=customer_1)
    # A customer message is a turn's words too; a line break selected on the page is a space.
    assert _add(run, alice, turn_index=1, quote=customer_1, severity="minor").quote == customer_1
    miss = _add(
        run,
        alice,
        quote="Parking is  free\nbehind the building",
        rule_id="other",
        other_text="promises a free car park",
    )
    assert miss.quote == "Parking is free behind the building"
    assert miss.other_text == "promises a free car park"


def test_adding_the_same_miss_twice_keeps_one(run: Run, alice: Any) -> None:
    first = add_missed_finding(
        run=run, case=_case(run), turn_index=0, rule_id="unsupported_facts", other_text="",
        severity="critical", quote=MISSED, note="", user=alice,
    )  # fmt: skip
    again = add_missed_finding(
        run=run, case=_case(run), turn_index=0, rule_id="unsupported_facts", other_text="",
        severity="major", quote=f" {MISSED} ", note="again", user=alice,
    )  # fmt: skip
    assert first.created and not again.created and again.missed.pk == first.missed.pk
    assert MissedFinding.objects.count() == 1


def test_an_unfinished_run_takes_no_miss(demo_org: Organization, alice: Any) -> None:
    from tests.runs.helpers import start_run

    judged = start_run(demo_org, responder=BOT, lock=False)
    assert judged.locked_at is None
    with pytest.raises(MissedFindingError, match="not final yet"):
        _add(judged, alice)


def _post(client: Any, run: Run, **data: Any) -> Any:
    url = reverse("admin:runs_run_missed", args=[run.pk, _case(run).key])
    fields = {"turn_index": 0, "rule_id": "unsupported_facts", "severity": "critical"}
    return client.post(url, {**fields, **data})


def test_the_case_page_adds_a_miss(client: Any, run: Run, alice: Any) -> None:
    client.force_login(alice)
    page_url = reverse("admin:runs_run_case", args=[run.pk, _case(run).key])
    page = client.get(page_url).content.decode()
    assert 'id="qa-missed-form"' in page and 'data-turn="0"' in page
    # A quote the turn does not say: the page again, with the reason beside the quote.
    refused = _post(client, run, quote="Parking costs nothing at all", note="kept")
    assert refused.status_code == 200
    text = refused.content.decode()
    assert "Turn 0 does not say this" in text and ">kept</textarea>" in text
    assert not MissedFinding.objects.exists()
    added = _post(client, run, quote=MISSED, note="no parking in the KB")
    miss = MissedFinding.objects.get()
    assert added.status_code == 302 and added.url.endswith(f"#missed-{miss.pk}")
    page = client.get(page_url).content.decode()
    assert f'id="missed-{miss.pk}"' in page and "added by alice" in page


def test_only_a_reviewer_of_the_organization_adds_one(
    client: Any, django_user_model: Any, run: Run
) -> None:
    viewer = make_staff_user(django_user_model, username="viewer")
    run.organization.members.add(viewer)
    client.force_login(viewer)
    page = client.get(reverse("admin:runs_run_case", args=[run.pk, _case(run).key]))
    assert page.status_code == 200 and 'id="qa-missed-form"' not in page.content.decode()
    assert _post(client, run, quote=MISSED).status_code == 403
    stranger = make_staff_user(django_user_model, username="s", perms=("qalab.triage_finding",))
    client.force_login(stranger)  # a member of no organization: the run is not theirs
    assert _post(client, run, quote=MISSED).status_code == 404
    assert not MissedFinding.objects.exists()


def test_the_report_shows_the_miss_and_the_verdict_it_would_have_had(
    client: Any, run: Run, alice: Any
) -> None:
    assert report_json(run)["missed_findings"] == []
    assert report_json(run)["verdict_with_missed"] is None
    _add(run, alice, note="<b>no</b> [parking](javascript:alert(1))")
    data = report_json(run)
    assert data["verdict"] == "PASS_WITH_FINDINGS"  # never changed by a miss
    assert data["verdict_with_missed"] == "FAIL_CRITICAL"
    (miss,) = data["missed_findings"]
    assert {k: miss[k] for k in ("rule_id", "severity", "case", "turn", "quote", "reviewer")} == {
        "rule_id": "unsupported_facts",
        "severity": "critical",
        "case": _case(run).key,
        "turn": 0,
        "quote": MISSED,
        "reviewer": "alice",
    }
    assert miss["carried_from"] is None
    # The judge's own counts leave it out.
    assert data["summary"]["findings"]["critical"] == 0
    md = report_to_markdown(report_build(run=run))
    assert "### Added by reviewers (1 missed by the judge, not in the verdict)" in md
    assert "verdict would have been FAIL_CRITICAL (it stays PASS_WITH_FINDINGS" in md
    assert f"“{MISSED}” (added by alice): &lt;b&gt;no&lt;/b&gt; \\[parking\\]" in md
    assert "<b>" not in md and "[parking](" not in md
    client.force_login(alice)
    page = client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert 'id="missed"' in page and "added by alice" in page
    assert "would have been <strong>FAIL_CRITICAL</strong>" in page
    assert "&lt;b&gt;no&lt;/b&gt;" in page and "<b>no</b>" not in page


def test_the_next_run_carries_the_miss_while_the_bot_still_says_it(run: Run, alice: Any) -> None:
    added = _add(run, alice)
    nxt = _run(run.organization, reuse=run)
    (carried,) = MissedFinding.objects.filter(run=nxt)
    assert carried.carried_from_run == run.pk and carried.carried_from == added
    assert (carried.rule_id, carried.severity, carried.quote) == (
        "unsupported_facts",
        "critical",
        MISSED,
    )
    assert carried.case.scenario_key == added.case.scenario_key and carried.reviewer == alice
    assert carried.fingerprint == added.fingerprint
    # Shown as carried; the next run's verdict is the judge's alone.
    data = report_json(nxt)
    assert data["missed_findings"][0]["carried_from"] == run.pk
    assert nxt.verdict == Verdict.PASS_WITH_FINDINGS
    assert data["verdict_with_missed"] == "FAIL_CRITICAL"
    assert f"(added by alice, carried from run {run.pk})" in report_to_markdown(
        report_build(run=nxt)
    )
    # Carried from where it was added, not from a copy: a third run names the first.
    third = _run(run.organization, reuse=nxt)
    assert MissedFinding.objects.get(run=third).carried_from_run == run.pk
    # A bot that no longer says it carries nothing.
    _REPLY["text"] = V2
    fixed = _run(run.organization, reuse=run)
    assert not MissedFinding.objects.filter(run=fixed).exists()


def test_the_lab_s_own_runs_and_real_bots_keep_their_misses_apart(run: Run, alice: Any) -> None:
    _add(run, alice)
    lab = _run(run.organization, reuse=run, purpose="selftest")
    assert lab.probe == "selftest"
    # The lab's run says the quote too, but a real bot's miss is not the lab's.
    assert lab.cases.filter(turns__responder_reply__contains=MISSED).exists()
    assert not MissedFinding.objects.filter(run=lab).exists()
    _add(lab, alice, severity="major")
    real_next = _run(run.organization, reuse=run)
    lab_next = _run(run.organization, reuse=lab, purpose="selftest")
    assert MissedFinding.objects.get(run=real_next).carried_from_run == run.pk
    assert MissedFinding.objects.get(run=lab_next).carried_from_run == lab.pk


def test_the_accuracy_page_counts_the_miss_once(client: Any, run: Run, alice: Any) -> None:
    client.force_login(alice)
    _post(client, run, quote=MISSED, note="no parking in the KB")
    _run(run.organization, reuse=run)  # carries it: a copy, not another miss
    assert MissedFinding.objects.count() == 2
    url = reverse("admin:runs_run_accuracy", args=[run.organization.slug])
    page = client.get(url).content.decode()
    assert "1 miss added by hand" in page
    assert page.count('<tr data-rule="unsupported_facts">') == 1
    assert f"Run #{run.pk} · " in page and MISSED in page
