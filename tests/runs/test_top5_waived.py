"""The Top 5 ranks waived findings last (issue 32, point 8): a group of critical findings a
reviewer marked won't fix / does not fail the gate never leads the one critical that fails the
run. Real runs (offline engine, inline) of a bot defined here; the second run carries the
reviewer's decisions from the first by fingerprint (`runs.services.carry`)."""

from __future__ import annotations

from typing import Any

import pytest

from qalab.models import Organization
from runs import services
from runs.models import Run, Verdict
from tests.runs.helpers import report_json, start_run

pytestmark = pytest.mark.django_db

BOT = "python:tests.runs.test_top5_waived:bot"
PRICE = "A check-up is 17.35 EUR."
UNSAFE = "Take 400 mg of ibuprofen every four hours."


def bot(request: dict[str, Any]) -> dict[str, Any]:
    """Invents a price in every reply; in the first scenario it also gives a dose."""
    unsafe = request["session_id"].endswith("-sc-01")
    reply = f"{PRICE} {UNSAFE}" if unsafe else PRICE
    return {"reply": reply, "status": "AWAITING_RESPONSE", "extracted": {}}


def _rules(report: dict[str, Any], action: dict[str, Any]) -> set[str]:
    by_id = {f["id"]: f for f in report["findings"]}
    return {by_id[i]["rule_id"] for i in action["finding_ids"]}


def test_a_waived_critical_group_ranks_below_the_critical_that_fails_the_run(
    demo_org: Organization, django_user_model: Any
) -> None:
    alice = django_user_model.objects.create_user(username="alice", password="pw-123456")
    run1 = start_run(demo_org, responder=BOT, scenarios=6)
    price = list(run1.findings.filter(rule_id="unsupported_facts").values_list("id", flat=True))
    assert len(price) >= 5
    assert run1.findings.filter(rule_id="unsafe_advice").count() == 1
    # Before any decision the many price findings lead: more criticals, higher score.
    first = report_json(run1)
    assert _rules(first, first["top_actions"][0]) == {"unsupported_facts"}

    services.finding_triage(
        run=run1, finding_ids=price, state="wont_fix", reviewer=alice, gate_waived=True
    )
    run2 = start_run(demo_org, responder=BOT, reuse_artifacts=run1.id)
    assert isinstance(run2, Run) and run2.locked_at is not None
    report = report_json(run2)
    assert report["summary"]["carry"]["gate_waived"] >= 5
    # The dose still fails the run, and it is action #1.
    assert run2.verdict == Verdict.FAIL_CRITICAL
    actions = report["top_actions"]
    assert _rules(report, actions[0]) == {"unsafe_advice"}
    # Every action that counts comes before the waived group (which may not fit in the five).
    ranks = {a["rank"]: _rules(report, a) == {"unsupported_facts"} for a in actions}
    waived = [rank for rank, aside in ranks.items() if aside]
    assert all(rank > max(r for r, aside in ranks.items() if not aside) for rank in waived)
    for action in actions:
        if action["rank"] in waived:
            assert "set aside by a reviewer's decision" in action["rationale"]


def test_a_wont_fix_critical_that_still_fails_the_gate_keeps_its_rank(
    demo_org: Organization, django_user_model: Any
) -> None:
    # Won't fix without "does not fail the gate": the price findings still fail the run, so
    # they still lead.
    alice = django_user_model.objects.create_user(username="alice", password="pw-123456")
    run1 = start_run(demo_org, responder=BOT, scenarios=6)
    price = list(run1.findings.filter(rule_id="unsupported_facts").values_list("id", flat=True))
    services.finding_triage(run=run1, finding_ids=price, state="wont_fix", reviewer=alice)
    run2 = start_run(demo_org, responder=BOT, reuse_artifacts=run1.id)
    report = report_json(run2)
    assert _rules(report, report["top_actions"][0]) == {"unsupported_facts"}
