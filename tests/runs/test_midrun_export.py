"""An export of a run that is still going says so and never presents a verdict."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from runs.models import RunStatus
from tests.runs.helpers import generate_only, start_run

pytestmark = pytest.mark.django_db


def _exports(admin_client, run_id: int) -> tuple[dict, str]:
    body = admin_client.get(reverse("admin:runs_run_export_json", args=[run_id])).content
    md = admin_client.get(reverse("admin:runs_run_export_md", args=[run_id])).content.decode()
    return json.loads(body), md


def test_a_simulating_run_exports_progress_not_a_verdict(admin_client, demo_org):
    run = generate_only(demo_org, scenarios=2)
    assert run.status == RunStatus.SIMULATING
    report, md = _exports(admin_client, run.id)
    assert report["verdict"] is None and report["verdict_reason"] == ""
    progress = report["in_progress"]
    assert (progress["stage"], progress["cases_done"], progress["cases_total"]) == (
        "simulating",
        0,
        2,
    )
    assert "no verdict yet" in progress["note"]
    assert "**In progress: simulating, 0/2 cases**" in md
    assert "Verdict" not in md and "No findings" not in md and "Nothing to do" not in md
    assert "Not judged yet." in md


def test_a_judged_run_waiting_for_its_report_has_no_verdict_either(admin_client, demo_org):
    run = start_run(demo_org, responder="canary:invent_price", scenarios=1, lock=False)
    assert run.status == RunStatus.REPORTING and run.findings.exists()
    report, md = _exports(admin_client, run.id)
    assert report["verdict"] is None and report["in_progress"]["stage"] == "reporting"
    assert report["in_progress"]["cases_done"] == 1
    assert "In progress: reporting, 1/1 cases" in md and "Verdict" not in md


def test_a_final_run_has_its_verdict_and_no_progress(admin_client, demo_org):
    run = start_run(demo_org, responder="canary:invent_price", scenarios=1)
    report, md = _exports(admin_client, run.id)
    assert report["in_progress"] is None and report["verdict"] == run.verdict != ""
    assert f"**Verdict: {run.verdict}**" in md and "In progress" not in md
