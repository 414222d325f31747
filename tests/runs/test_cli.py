"""qalab_run / qalab_report flags and exit codes (DESIGN §11)."""

from __future__ import annotations

import json

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
