"""A Quick run through a real `celery worker` subprocess, on Postgres and Redis."""

from __future__ import annotations

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
