"""A finding of the baseline whose case this run never played (cancelled, skipped on budget) is
"not played", never "resolved" (issue 33, item 7), in every format the delta shows: the JSON,
the Markdown, the CLI summary line, the delta page and the report page; and the triage carry
does not call its decision resolved either."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from qalab.models import Organization
from runs import services
from runs.inline import InlineDispatcher
from runs.models import CaseStatus, Run, RunCase, RunStatus
from runs.report import report_to_markdown
from runs.report.build import report_build
from runs.report.words import delta_summary
from runs.services.simulate import advance_after_cases
from tests.runs.helpers import RecordingDispatcher, delta_json, start_run

pytestmark = pytest.mark.django_db

BOT = "python:tests.responders:xss"


def _first_case_only(org: Organization, base: Run) -> tuple[Run, list[RunCase]]:
    """A run on the baseline's test set whose first case (sc-01) is played, the rest queued."""
    run = services.run_create(
        organization=org, preset="quick", responder_spec=BOT, reuse_artifacts=base.id
    )
    services.run_start(run=run, dispatcher=RecordingDispatcher())
    services.run_generate(run_id=run.id, dispatcher=RecordingDispatcher())
    cases = list(run.cases.order_by("scenario_key"))
    assert [c.scenario_key for c in cases] == ["sc-01", "sc-02", "sc-03"]
    services.case_simulate(case_id=cases[0].id, dispatcher=RecordingDispatcher())
    assert RunCase.objects.get(id=cases[0].id).status == CaseStatus.DONE
    return run, cases


def _base(org: Organization) -> tuple[Run, set[str], set[str]]:
    """The baseline, its fingerprints, and those found only in cases other than sc-01."""
    base = start_run(org, responder=BOT, scenarios=3)
    by_case: dict[str, set[str]] = {}
    for f in base.findings.select_related("case"):
        by_case.setdefault(f.case.scenario_key, set()).add(f.fingerprint)
    everything = set().union(*by_case.values())
    elsewhere = everything - by_case["sc-01"]
    assert elsewhere, by_case  # the test needs a finding of sc-02 or sc-03 alone
    return base, everything, elsewhere


def _all_formats(run: Run) -> tuple[dict, str, str]:
    report = report_build(run=run)
    delta = delta_json(run)
    assert delta is not None
    return delta, report_to_markdown(report), delta_summary(report)


def test_a_cancelled_run_resolves_nothing(demo_org: Organization, admin_client: Client) -> None:
    base, everything, _ = _base(demo_org)
    run, _ = _first_case_only(demo_org, base)
    assert services.run_cancel(run_id=run.id) is True
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.locked_at and not run.findings.exists()

    delta, markdown, line = _all_formats(run)
    findings = delta["findings"]
    # Nothing was judged: no finding of the baseline can be said to be gone.
    assert findings["resolved_fingerprints"] == [] and findings["items"]["resolved"] == []
    assert findings["resolved"] == {"critical": 0, "major": 0, "minor": 0}
    assert set(findings["not_played_fingerprints"]) == everything
    assert sum(findings["not_played"].values()) == len(everything)
    assert "resolved 0" in line.replace(",", "") or " 0 resolved" in line
    assert f"{len(everything)} not played" in line
    assert re.search(rf"resolved 0\b.*not played {len(everything)}", markdown), markdown

    page = admin_client.get(f"/admin/runs/run/{run.pk}/delta/").content.decode()
    assert "Not played" in page
    report_page = admin_client.get(f"/admin/runs/run/{run.pk}/report/").content.decode()
    assert f"0 resolved, {len(everything)} not played" in " ".join(report_page.split())


def test_cases_skipped_on_budget_are_not_played(demo_org: Organization) -> None:
    base, _, elsewhere = _base(demo_org)
    # Decisions on the baseline's findings of the unplayed cases: not "resolved" by this run.
    for f in base.findings.filter(fingerprint__in=elsewhere):
        services.finding_triage(run=base, finding_ids=[f.id], state="confirmed")
    run, cases = _first_case_only(demo_org, base)
    # What a budget stop leaves: the cases not started are skipped, the run is judged.
    RunCase.objects.filter(id__in=[c.id for c in cases[1:]]).update(
        status=CaseStatus.SKIPPED_BUDGET
    )
    dispatcher = InlineDispatcher()
    advance_after_cases(run.id, dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    assert run.locked_at and run.verdict

    delta, markdown, line = _all_formats(run)
    findings = delta["findings"]
    assert set(findings["not_played_fingerprints"]) == elsewhere
    assert not set(findings["resolved_fingerprints"]) & elsewhere
    assert {i["fingerprint"] for i in findings["items"]["not_played"]} == elsewhere
    assert f"{len(elsewhere)} not played" in line
    assert f"not played {len(elsewhere)}" in markdown

    carry = report_build(run=run).summary.carry
    assert carry.baseline_run_id == base.id
    assert carry.resolved == 0 and not set(carry.resolved_fingerprints) & elsewhere


def test_a_case_played_again_still_resolves(demo_org: Organization) -> None:
    """Every case of the same test set played, by a bot without those defects: resolved."""
    base, everything, _ = _base(demo_org)
    run = start_run(demo_org, responder="reference", reuse_artifacts=base.id)
    assert set(run.cases.values_list("status", flat=True)) == {CaseStatus.DONE}
    delta = delta_json(run, other=base)
    assert delta is not None
    assert delta["findings"]["not_played_fingerprints"] == []
    assert delta["findings"]["resolved_fingerprints"]
    assert set(delta["findings"]["resolved_fingerprints"]) <= everything
