"""A Quick run end to end on the real database, inline, plus the pipeline's safety rules."""

from __future__ import annotations

import pytest

from runs import services
from runs.inline import InlineDispatcher
from runs.models import CaseStatus, LlmCall, Run, RunStatus, RunTurn
from tests.runs.helpers import qalab_run, transcript_text

pytestmark = pytest.mark.django_db

REPORT_KEYS = {
    "run_id",
    "organization",
    "preset",
    "status",
    "engine",
    "settings_hash",
    "seed",
    "started_at",
    "finished_at",
    "tokens",
    "scores",
    "summary",
    "findings",
    "top_actions",
    "cases",
    "delta",
}


def test_it_runs_a_quick_run_inline_end_to_end(demo_org, tmp_path):
    code, report = qalab_run(
        "--org", "demo", "--preset", "quick", "--inline", "--seed", "7", tmp_path=tmp_path
    )

    assert code in (0, 1)
    assert set(report) >= REPORT_KEYS
    assert report["status"] == "done"
    assert report["verdict"] in ("FAIL_CRITICAL", "PASS_WITH_FINDINGS", "PASS_CLEAN")
    assert (code == 1) == (report["verdict"] == "FAIL_CRITICAL")
    assert set(report["tokens"]) >= {"budget", "used", "by_role"}
    assert set(report["scores"]) == {
        "groundedness",
        "extraction_accuracy",
        "conversation_quality",
        "overall",
    }
    assert set(report["summary"]) >= {
        "cases",
        "completed",
        "passed",
        "findings",
        "unsupported_findings",
    }

    assert len(report["cases"]) == 12
    for case in report["cases"]:
        assert 1 <= len(case["turns"]) <= 4, case["id"]
        for turn in case["turns"]:
            assert turn["customer"].strip() and turn["reply"].strip()
        assert case["fixture_metrics"]["line_count"] >= 200
        assert set(case) >= {
            "id",
            "scenario",
            "fixture",
            "expected_status",
            "actual_status",
            "turns",
            "scores",
            "pass",
        }

    assert 0 < report["tokens"]["used"] <= 50_000
    tokens = report["tokens"]
    assert sum(tokens["by_role"].values()) == tokens["used"] + tokens["responder_used"]
    assert report["tokens"]["estimated"] is True

    cases = {c["id"]: c for c in report["cases"]}
    for finding in report["findings"]:
        text = transcript_text(cases[finding["case"]])
        for ev in finding["evidence"]:
            if ev["source"] in ("reply", "customer", "extracted"):
                assert ev["quote"] in text, (finding["rule_id"], ev)


def test_it_gives_the_same_test_set_for_the_same_seed(demo_org, tmp_path):
    _, first = qalab_run(
        "--org", "demo", "--inline", "--seed", "11", "--scenarios", "3", tmp_path=tmp_path
    )
    _, second = qalab_run(
        "--org", "demo", "--inline", "--seed", "11", "--scenarios", "3", tmp_path=tmp_path
    )
    a = Run.objects.get(id=first["run_id"]).source["artifact_hashes"]
    b = Run.objects.get(id=second["run_id"]).source["artifact_hashes"]
    assert a == b
    assert second["delta"]["previous_run_id"] == first["run_id"]
    assert second["delta"]["changed_inputs"]["test_set_identical"] is True


def test_it_stops_cleanly_when_the_budget_runs_out(demo_org, tmp_path):
    code, report = qalab_run(
        "--org", "demo", "--inline", "--budget", "13400", "--seed", "3", tmp_path=tmp_path
    )
    assert report["status"] == "budget_stopped"
    # A critical found before the stop is never hidden behind BUDGET_STOPPED (judge.gate);
    # the exit code follows the verdict either way.
    criticals = report["summary"]["findings"]["critical"]
    assert report["verdict"] == ("FAIL_CRITICAL" if criticals else "BUDGET_STOPPED")
    assert code == (1 if criticals else 3)
    assert report["tokens"]["used"] <= 13_400
    statuses = [c["status"] for c in report["cases"]]
    assert "skipped_budget" in statuses
    assert LlmCall.objects.filter(run_id=report["run_id"], status="denied").exists()


def test_it_stops_during_generation_when_the_budget_is_tiny(demo_org, tmp_path):
    code, report = qalab_run("--org", "demo", "--inline", "--budget", "500", tmp_path=tmp_path)
    assert code == 3
    assert report["verdict"] == "BUDGET_STOPPED"
    assert report["tokens"]["used"] <= 500


def test_it_ignores_duplicate_stage_messages(demo_org):
    run = services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=5)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    turns = RunTurn.objects.filter(case__run=run).count()
    used = run.tokens_used
    # Redeliver every stage: nothing changes, nothing is duplicated.
    again = InlineDispatcher()
    again.generate(run.id)
    for case in run.cases.all():
        again.simulate(case.id)
    again.judge(run.id)
    again.report(run.id)
    again.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert RunTurn.objects.filter(case__run=run).count() == turns
    assert run.tokens_used == used


def test_it_advances_to_judging_only_after_the_last_case(demo_org):
    run = services.run_create(organization=demo_org, preset="quick", scenarios=3, seed=9)
    # Generate only; the simulate steps it queues are never drained.
    services.run_generate(run_id=run.id, dispatcher=InlineDispatcher())
    cases = list(run.cases.order_by("-scenario_key"))  # out of order on purpose
    judged = []

    class Recorder(InlineDispatcher):
        def judge(self, run_id: int) -> None:
            judged.append(run_id)

    recorder = Recorder()
    for i, case in enumerate(cases):
        services.case_simulate(case_id=case.id, dispatcher=recorder)
        run.refresh_from_db()
        if i < len(cases) - 1:
            assert run.status == RunStatus.SIMULATING
            assert judged == []
    assert judged == [run.id]
    assert run.status == RunStatus.JUDGING
    assert set(run.cases.values_list("status", flat=True)) == {CaseStatus.DONE}


def test_it_resumes_a_redelivered_case_after_its_last_turn(demo_org):
    from datetime import timedelta

    from django.utils import timezone

    run = services.run_create(organization=demo_org, preset="quick", scenarios=1, seed=2)
    services.run_generate(run_id=run.id, dispatcher=InlineDispatcher())
    case = run.cases.get()
    services.case_simulate(case_id=case.id, dispatcher=InlineDispatcher())
    case.refresh_from_db()
    full = list(case.turns.values_list("index", "customer_message", "responder_reply"))
    assert full
    # Pretend the worker died after the first turn, before the fan-in: drop later turns,
    # expire the lease, and put the run back where it was then.
    case.turns.filter(index__gte=1).delete()
    Run.objects.filter(id=run.id).update(status=RunStatus.SIMULATING)
    type(case).objects.filter(id=case.id).update(
        status=CaseStatus.RUNNING, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    services.case_simulate(case_id=case.id, dispatcher=InlineDispatcher())
    case.refresh_from_db()
    assert case.status == CaseStatus.DONE
    assert case.attempt == 2
    assert list(case.turns.values_list("index", "customer_message", "responder_reply")) == full
