"""Honest fallbacks (issue 20, point 1): every LLM task the offline implementation did instead of
the model is counted per role, stated in the JSON, the Markdown, the CLI summary and the page,
and above QALAB_LLM_MAX_FALLBACK_SHARE the run ends `error` instead of getting a verdict."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from runs.models import Run, RunStatus
from runs.report import report_to_markdown
from runs.report.build import report_build
from tests.llm_server import FakeOpenAI
from tests.runs.test_openai_pipeline import notes_brain, openai_settings

pytestmark = pytest.mark.django_db


def _run(limit: float) -> tuple[int, Run, str, int]:
    """A Quick run whose schema-filled manifest and blueprints fail their task checks: the
    generator falls back to the offline writers for those two tasks."""
    out = StringIO()
    with (
        FakeOpenAI(seed=3, brain=notes_brain) as server,
        openai_settings(server, QALAB_LLM_MAX_FALLBACK_SHARE=limit),
    ):
        code = 0
        try:
            call_command(
                "qalab_run", "--org", "demo", "--inline", "--scenarios", "1", "--seed", "4",
                stdout=out, stderr=StringIO(),
            )  # fmt: skip
        except CommandError as exc:
            code = exc.returncode
    return code, Run.objects.latest("id"), out.getvalue(), len(server.requests)


def test_fallbacks_are_counted_per_role_and_stated_everywhere(demo_org, admin_client):
    code, run, printed, requests = _run(limit=0.9)
    assert code in (0, 1) and run.status == RunStatus.DONE, run.error
    report = report_build(run=run)
    tokens = report.to_json()["tokens"]
    assert tokens["fallbacks_by_role"] == {"generator": 2}
    # `requests` counts what the server received; `calls` is the ledger's rows, more of them.
    assert tokens["requests"] == requests < tokens["calls"]
    share = tokens["fallback_share"]
    assert 0 < share < 0.9 and run.config["max_fallback_share"] == 0.9
    said = "2 LLM task(s) done by the offline implementation instead of the model (generator 2"
    assert said in report_to_markdown(report)
    assert f"fallbacks: {said}" in printed
    page = admin_client.get(f"/admin/runs/run/{run.id}/report/").content.decode()
    assert 'id="qa-fallbacks"' in page and "generator 2" in page


def test_a_run_the_model_mostly_did_not_do_gets_no_verdict(demo_org):
    code, run, printed, _ = _run(limit=0.05)
    assert "FAIL" not in printed and "PASS" not in printed
    assert code == 4
    assert run.status == RunStatus.ERROR and run.verdict == "" and run.locked_at is not None
    assert run.error.startswith("2 of ")
    assert "fell back to the offline implementation (generator 2)" in run.error
    assert "above QALAB_LLM_MAX_FALLBACK_SHARE=0.05" in run.error


def test_the_offline_engine_has_no_fallback_share(demo_org):
    from tests.runs.helpers import start_run

    run = start_run(demo_org, scenarios=1)
    tokens = report_build(run=run).to_json()["tokens"]
    assert tokens["fallbacks_by_role"] == {} and tokens["fallback_share"] is None
