"""Quick runs against the test server's llama.cpp profile (issue 20, acceptance 1): `auto` picks
`json_object` after the server's 500 to `json_schema`, the system-role probe sees the chat
template drop system messages and picks `merge`, the run completes and its snapshot says both;
a run whose replies fall back too often ends `error` with the share in its message."""

from __future__ import annotations

import pytest

from runs.models import LlmCall, Run, RunStatus
from tests.llm_server import FakeOpenAI
from tests.runs.helpers import qalab_run
from tests.runs.test_openai_pipeline import notes_brain, openai_settings

pytestmark = pytest.mark.django_db

QUICK = ("--org", "demo", "--inline", "--scenarios", "2", "--max-turns", "2", "--seed", "3")


def test_auto_picks_json_object_and_merge_and_the_run_completes(demo_org, tmp_path, fresh_probes):
    with (
        FakeOpenAI(profile="llamacpp", brain=notes_brain) as server,
        openai_settings(server, QALAB_LLM_JSON_MODE="auto", QALAB_LLM_SYSTEM_ROLE="auto"),
    ):
        code, report = qalab_run(*QUICK, tmp_path=tmp_path)
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    assert report["source"]["json_mode"] == "json_object"
    assert report["source"]["system_role"] == "merge"
    probe_schema, probe_object, probe_role, *work = server.requests
    assert probe_schema["response_format"]["type"] == "json_schema"
    assert server.fault_counts["reject_json_schema"] == 1  # the probe's json_schema: a 500
    assert {b["response_format"]["type"] for b in [probe_object, probe_role, *work]} == {
        "json_object"
    }
    assert [m["role"] for m in probe_role["messages"]] == ["system", "user"]
    # Only the probe's system message was dropped: the run sent none, its system text reached
    # the model at the head of the first user message.
    assert server.dropped_system == 1
    assert work and all(m["role"] != "system" for b in work for m in b["messages"])
    assert any("JSON schema" in b["messages"][0]["content"] for b in work)
    # The fixture notes came back with raw newlines in their JSON string, and were read as they
    # are: none of them fell back to the offline writer.
    assert any('"# Front desk notes\nPlease' in reply for reply in server.replies)
    fixtures = LlmCall.objects.filter(run_id=report["run_id"], purpose__startswith="fixture:")
    assert fixtures.filter(status="ok").exists()
    assert not fixtures.filter(status="fallback").exists()


def test_a_run_falling_back_too_often_ends_error_with_the_share(demo_org, tmp_path, fresh_probes):
    with (
        FakeOpenAI(profile="llamacpp") as server,
        openai_settings(
            server,
            QALAB_LLM_JSON_MODE="auto",
            QALAB_LLM_SYSTEM_ROLE="auto",
            QALAB_LLM_MAX_FALLBACK_SHARE=0.2,
        ),
    ):
        code, report = qalab_run(*QUICK, tmp_path=tmp_path)
    run = Run.objects.get(id=report["run_id"])
    tokens = report["tokens"]
    assert code == 4
    assert run.status == RunStatus.ERROR and run.verdict == ""
    assert tokens["fallback_share"] > 0.2
    share = f"{tokens['fallbacks']} of "
    assert run.error.startswith(share), run.error
    assert f"({tokens['fallback_share']:.0%}) fell back" in run.error
    assert "above QALAB_LLM_MAX_FALLBACK_SHARE=0.2" in run.error
    assert report["source"]["json_mode"] == "json_object"
    assert report["source"]["system_role"] == "merge"
