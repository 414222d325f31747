"""A case is judged by its own task as soon as its conversation ends (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from qalab.domain import ArtifactKind
from qalab.llm import NullLedger, OfflineEngine
from runs.artifacts import load_blueprint, load_case_checks, load_fixture, load_manifest
from runs.models import Run, RunStatus
from runs.services.case_judging import judge_ended_case
from runs.services.judging import case_transcript
from tests.runs.helpers import generate_only, start_run


def test_the_stored_checks_are_what_the_judge_stage_finds(demo_org: Any) -> None:
    from judge.engine import raw_findings
    from runs.services.case_judging import judge_config

    run = start_run(demo_org, responder="canary:invent_price", scenarios=3, lock=False)
    stored = load_case_checks(run)
    assert sorted(stored) == sorted(run.cases.values_list("scenario_key", flat=True))
    manifest = load_manifest(run.id)
    for case in run.cases.all():
        again = raw_findings(case_transcript(run, case), manifest, judge_config(run))
        assert stored[case.scenario_key].findings == again
    assert any(stored.values())  # the canary's invented price was found early


def _judge(run: Run) -> None:
    case = run.cases.order_by("scenario_key").first()
    assert case is not None
    judge_ended_case(
        run,
        case,
        blueprint=load_blueprint(run.id, case.scenario_key),
        fixture=load_fixture(run.id, case.fixture_key),
        manifest=load_manifest(run.id),
        turns=[],
        engine=OfflineEngine(ledger=NullLedger()),
    )


def test_an_ended_runs_late_case_stores_nothing(demo_org: Any) -> None:
    run = generate_only(demo_org, scenarios=1)
    _judge(run)  # still simulating: stored
    assert run.artifacts.filter(kind=ArtifactKind.CASE_CHECKS).count() == 1
    run.artifacts.filter(kind=ArtifactKind.CASE_CHECKS).delete()
    Run.objects.filter(id=run.id).update(status=RunStatus.CANCELLED)
    _judge(run)
    assert not run.artifacts.filter(kind=ArtifactKind.CASE_CHECKS).exists()


def test_the_worker_imports_the_sdk_and_the_checks_before_it_forks() -> None:
    # In a clean interpreter: here, other tests have imported everything already.
    script = """
import sys, django
django.setup()
from judge.checks import REGISTRY
from runs.tasks import preload_for_the_pool
wanted = [p.rpartition(".")[0] for p in REGISTRY.values()] + ["openai.resources.chat.completions.completions"]
before = [m for m in wanted if m in sys.modules]
preload_for_the_pool()
print(len(before), sum(m in sys.modules for m in wanted), len(wanted))
"""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "qalab.settings"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    before, after, wanted = map(int, out)
    assert before < wanted and after == wanted
