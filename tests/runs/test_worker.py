"""A Quick run through a real `celery worker` subprocess, on Postgres and Redis."""

from __future__ import annotations

import itertools
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from runs.models import Run, RunStatus
from tests.factories import import_demo_org


@pytest.mark.django_db(transaction=True)
def test_it_completes_a_quick_run_with_a_worker(celery_worker_process, tmp_path):
    import_demo_org()
    out = tmp_path / "out.json"
    code = 0
    try:
        call_command(
            "qalab_run",
            "--org",
            "demo",
            "--preset",
            "quick",
            "--wait",
            "--timeout",
            "300",
            "--seed",
            "21",
            "--json",
            str(out),
        )
    except CommandError as exc:
        code = exc.returncode
    report = json.loads(out.read_text())
    assert code in (0, 1), report.get("error")
    assert report["status"] == RunStatus.DONE
    assert len(report["cases"]) == 12
    assert all(1 <= len(c["turns"]) <= 4 for c in report["cases"])
    assert 0 < report["tokens"]["used"] <= 50_000
    run = Run.objects.get(id=report["run_id"])
    assert run.locked_at is not None
    assert celery_worker_process.poll() is None  # the worker served the whole run


@pytest.mark.django_db(transaction=True)
def test_trials_are_cases_the_workers_play_side_by_side(celery_worker_process, tmp_path):
    """`--trials 2`: each trial is a case of its own, dispatched like any case, so the worker's
    two processes play trials at the same time (a bot that takes 0.25 s per reply)."""
    from runs.models import RunCase

    import_demo_org()
    out = tmp_path / "out.json"
    try:
        call_command(
            "qalab_run", "--org", "demo", "--scenarios", "3", "--trials", "2", "--wait",
            "--timeout", "300", "--seed", "21", "--responder", "python:tests.responders:paced",
            "--json", str(out),
        )  # fmt: skip
    except CommandError as exc:
        assert exc.returncode == 1  # the paced bot invents a price: FAIL_CRITICAL
    report = json.loads(out.read_text())
    assert report["status"] == RunStatus.DONE
    assert [c["id"] for c in report["cases"]] == [
        "sc-01", "sc-01.t2", "sc-02", "sc-02.t2", "sc-03", "sc-03.t2"
    ]  # fmt: skip
    assert report["trials"]["k"] == 2 and report["trials"]["played"] == 6
    spans = sorted(
        RunCase.objects.filter(run_id=report["run_id"]).values_list("started_at", "finished_at")
    )
    assert all(start and end for start, end in spans)
    overlapping = any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    assert overlapping, spans
