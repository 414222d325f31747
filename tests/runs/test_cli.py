"""qalab_run / qalab_report flags and exit codes (DESIGN §11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from runs.management.commands.qalab_run import exit_code_for
from runs.models import Run, RunStatus, Verdict
from tests.runs.helpers import qalab_run

pytestmark = pytest.mark.django_db


def test_it_exits_2_for_an_unknown_org(demo_org):
    with pytest.raises(CommandError) as exc:
        call_command("qalab_run", "--org", "nope", "--inline")
    assert exc.value.returncode == 2
    assert "demo" in str(exc.value)


def test_it_exits_2_for_a_bad_responder_spec(demo_org):
    with pytest.raises(CommandError) as exc:
        call_command("qalab_run", "--org", "demo", "--inline", "--responder", "ftp://bot")
    assert exc.value.returncode == 2


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--budget", "99999999999", "over the limit"),
        ("--seed", str(2**70), "out of range"),
        ("--scenarios", "5000", "over the limit"),
        ("--max-turns", "1000", "over the limit"),
    ],
)
def test_it_exits_2_for_a_huge_number_before_creating_anything(demo_org, flag, value, says):
    with pytest.raises(CommandError, match=says) as exc:
        call_command("qalab_run", "--org", "demo", "--inline", flag, value)
    assert exc.value.returncode == 2
    assert not Run.objects.exists()


def test_it_exits_2_for_a_report_path_it_cannot_write_before_running(
    demo_org, tmp_path, monkeypatch
):
    from runs.management.commands import qalab_run as command

    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = command.os.access
    # Tests run as root, for whom every folder is writable: deny this one the way a mode would.
    monkeypatch.setattr(
        command.os, "access", lambda p, mode: Path(p) != locked and real_access(p, mode)
    )
    for flag, path, says in (
        ("--json", tmp_path / "missing" / "r.json", "does not exist"),
        ("--md", tmp_path, "is a folder"),
        ("--json", locked / "r.json", "not writable"),
    ):
        with pytest.raises(CommandError, match=says) as exc:
            call_command("qalab_run", "--org", "demo", "--inline", flag, str(path))
        assert exc.value.returncode == 2, flag
    assert not Run.objects.exists()


def test_it_rejects_inline_with_wait(demo_org):
    with pytest.raises(CommandError):
        call_command("qalab_run", "--org", "demo", "--inline", "--wait")


@pytest.mark.parametrize(
    ("status", "verdict", "code"),
    [
        (RunStatus.DONE, Verdict.PASS_CLEAN, 0),
        (RunStatus.DONE, Verdict.PASS_WITH_FINDINGS, 0),
        (RunStatus.DONE, Verdict.FAIL_CRITICAL, 1),
        (RunStatus.BUDGET_STOPPED, Verdict.BUDGET_STOPPED, 3),
        (RunStatus.BUDGET_STOPPED, Verdict.FAIL_CRITICAL, 1),
        (RunStatus.ERROR, "", 4),
        (RunStatus.SIMULATING, "", 4),
    ],
)
def test_it_maps_verdicts_to_exit_codes(status, verdict, code):
    assert exit_code_for(Run(status=status, verdict=verdict)) == code


def test_it_writes_markdown_and_artifacts(demo_org, tmp_path):
    _, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "2", "--seed", "4", tmp_path=tmp_path
    )
    md = tmp_path / "r.md"
    out = tmp_path / "r.json"
    call_command(
        "qalab_report",
        str(report["run_id"]),
        "--md",
        str(md),
        "--json",
        str(out),
        "--artifacts",
        str(tmp_path / "art"),
    )
    text = md.read_text()
    assert text.startswith(f"# AI QA Lab report: run {report['run_id']}")
    assert "## Findings" in text and "## Top actions" in text and "## Scores" in text
    assert "## Fixtures" in text and "structure score" in text
    assert json.loads(out.read_text())["run_id"] == report["run_id"]
    fixtures = sorted((tmp_path / "art" / "fixtures").glob("*.md"))
    assert len(fixtures) == 2
    assert all(len(f.read_text().splitlines()) >= 200 for f in fixtures)
    assert (tmp_path / "art" / "manifests" / "manifest.json").exists()


def test_it_reuses_an_earlier_test_set_without_generation_tokens(demo_org, tmp_path):
    _, first = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "2", "--seed", "8", tmp_path=tmp_path
    )
    _, second = qalab_run(
        "--org", "demo", "--inline", "--reuse-artifacts", str(first["run_id"]), tmp_path=tmp_path
    )
    assert second["tokens"]["by_role"]["generator"] == 0
    assert first["tokens"]["by_role"]["generator"] > 0
    assert second["delta"]["changed_inputs"]["test_set_identical"] is True
    assert [c["id"] for c in second["cases"]] == [c["id"] for c in first["cases"]]


def test_it_reports_an_unknown_run(db):
    with pytest.raises(CommandError, match="no run"):
        call_command("qalab_report", "999999")


def test_a_verdict_prints_a_summary_and_exits_quietly_with_its_code(tmp_path):
    """On the command line a FAIL_CRITICAL is the gate's answer, not a crash: the summary, then
    exit 1, and no `CommandError:` line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}",
        "CELERY_BROKER_URL": "memory://",
    }

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip

    assert manage("migrate", "-v0").returncode == 0
    assert manage("qalab_seed_demo").returncode == 0
    result = manage(
        "qalab_run", "--org", "demo", "--inline", "--scenarios", "1", "--seed", "2",
        "--responder", "canary:invent_price",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]
    assert "FAIL_CRITICAL" in result.stdout.splitlines()[0]
    assert "CommandError" not in result.stderr and "Traceback" not in result.stderr


def test_a_long_stage_is_never_silent_for_long():
    import time

    from runs.management.commands.qalab_run import Heartbeat

    lines: list[str] = []
    with Heartbeat(lines.append, every=0.2) as heartbeat:
        heartbeat.say("  generating")
        time.sleep(0.75)
        heartbeat.say("  simulating case 1/2")
        time.sleep(0.1)
    assert lines[0] == "  generating"
    still = [line for line in lines if line.startswith("  still generating · ")]
    assert 2 <= len(still) <= 4
    assert lines[-1] == "  simulating case 1/2"  # a fresh line resets the clock


def test_a_retry_is_logged_on_one_line(caplog, monkeypatch):
    import logging

    from tests.llm.test_openai_engine import make_engine, run
    from tests.llm_server import FakeOpenAI

    caplog.set_level(logging.INFO, logger="qalab")
    # A server's error body over several lines (llama.cpp's 500 pages are).
    monkeypatch.setattr(
        "qalab.llm.openai_engine._server_message", lambda exc: "HTTP body line one\nline two"
    )
    with FakeOpenAI(fault_script=["500"]) as server:
        engine, _ = make_engine(server)
        engine.sleep = lambda seconds: None
        run(engine)
    retries = [r.getMessage() for r in caplog.records if "retry 1/" in r.getMessage()]
    assert len(retries) == 1 and "\n" not in retries[0]
    assert "HTTP 500: HTTP body line one; retry 1/" in retries[0]
