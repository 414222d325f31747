"""The test server's profiles (tests/llm_profiles.py) behave like the real servers they name, and
the engine and its probes cope with each quirk (issue 20, points 4 and 6)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from qalab.llm.base import LlmError, NullLedger
from qalab.llm.probe import SYSTEM_ROLE_MARKER
from tests.llm.test_openai_engine import MESSAGES, make_engine, statuses
from tests.llm_profiles import with_raw_newlines
from tests.llm_server import FakeOpenAI


class Notes(BaseModel):
    markdown: str


def notes(engine: Any, messages: list[dict[str, Any]] | None = None) -> Notes:
    return engine.run(
        role="generator",
        purpose="notes",
        messages=messages or MESSAGES,
        max_tokens=200,
        output=Notes,
        offline=lambda: Notes(markdown="offline"),
    )


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown server profile"):
        FakeOpenAI(profile="tgi")


# ------------------------------------------------------------------ llama.cpp
def test_llamacpp_answers_json_schema_with_a_500_and_the_probe_picks_json_object() -> None:
    with FakeOpenAI(profile="llamacpp") as server:
        engine, _ = make_engine(server)
        assert engine.probe_json_mode() == "json_object"
    assert server.fault_counts["reject_json_schema"] == 1
    assert server.json_schema_status == 500


def test_the_probe_logs_llamacpps_multi_line_500_on_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Found against the real server (tests/realserver): its 500 body is a pydantic error and a
    # traceback over five lines, and the probe's log line repeated all of them.
    with FakeOpenAI(profile="llamacpp") as server, caplog.at_level("INFO", "qalab.llm.openai"):
        engine, _ = make_engine(server)
        assert engine.probe_json_mode() == "json_object"
    [line] = [r.getMessage() for r in caplog.records if "not supported" in r.getMessage()]
    assert "\n" not in line
    assert line.startswith("probe: json_schema not supported by ")
    assert "HTTP 500: 1 validation error: {'type': 'literal_error'" in line
    assert "Input should be 'text' or 'json_object'" in line
    assert len(line) < 400


def test_llamacpp_writes_raw_newlines_in_json_object_strings_and_they_are_read() -> None:
    text = "# Front desk\nGreet\tevery patient."
    with FakeOpenAI(profile="llamacpp", brain=lambda body: {"markdown": text}) as server:
        engine, _ = make_engine(server, json_mode="json_object")
        result = notes(engine)
        raw = server.replies[-1]
    assert "# Front desk\nGreet\tevery" in raw  # unescaped, inside the JSON string
    with pytest.raises(json.JSONDecodeError, match="control character"):
        json.loads(raw)
    assert result.markdown == text  # the lenient reader takes it, no repair turn
    assert [c["status"] for c in engine.ledger.calls] == ["ok"]


def test_raw_newlines_leave_an_escaped_backslash_alone() -> None:
    assert with_raw_newlines(json.dumps({"a": "x\\ny\nz"})) == '{"a": "x\\\\ny\nz"}'


def test_llamacpp_drops_system_messages_before_the_model_sees_them() -> None:
    seen_by_brain: list[list[dict[str, Any]]] = []

    def brain(body: dict[str, Any]) -> None:
        seen_by_brain.append(body["messages"])

    with FakeOpenAI(profile="llamacpp", brain=brain) as server:
        engine, _ = make_engine(server, json_mode="json_object")
        notes(engine)
        assert server.dropped_system == 1
        assert [m["role"] for m in server.seen_prompts[-1]] == ["user"]
        assert "You write short notes." not in json.dumps(seen_by_brain[-1])
        # Counted as the model saw it: the user message only (4 characters a token).
        user_chars = len(MESSAGES[-1]["content"])
        assert server.usage_total == -(-user_chars // 4) + -(-len(server.replies[-1]) // 4)

        merged, _ = make_engine(server, json_mode="json_object", system_role="merge")
        notes(merged)
    assert server.dropped_system == 1  # merged into the user message: nothing dropped
    assert "You write short notes." in seen_by_brain[-1][0]["content"]


def test_the_system_role_probe_picks_merge_where_the_template_drops_system_messages() -> None:
    with FakeOpenAI(profile="llamacpp") as server:
        engine, _ = make_engine(server, json_mode="json_object")
        assert engine.probe_system_role() == "merge"
        (body,) = server.requests
    assert [m["role"] for m in body["messages"]] == ["system", "user"]  # sent as they are
    assert SYSTEM_ROLE_MARKER in body["messages"][0]["content"]
    assert SYSTEM_ROLE_MARKER not in body["messages"][1]["content"]
    assert SYSTEM_ROLE_MARKER not in server.replies[0]
    assert [c["purpose"] for c in engine.ledger.calls] == ["probe_system_role"]  # metered
    assert engine.system_role == "system"  # the caller decides what to do with the answer


@pytest.mark.parametrize("json_mode", ["json_schema", "json_object", "text"])
def test_the_system_role_probe_keeps_system_where_the_model_sees_it(json_mode: str) -> None:
    with FakeOpenAI() as server:
        engine, _ = make_engine(server, json_mode=json_mode)
        assert engine.probe_system_role() == "system"
    assert SYSTEM_ROLE_MARKER in server.replies[0]
    assert len(server.requests) == 1


def test_the_system_role_probe_takes_an_http_error_as_merge_without_retrying() -> None:
    # A template that refuses the system role makes the server answer with an error.
    with FakeOpenAI(fault_script=["500"]) as server:
        engine, _ = make_engine(server)
        assert engine.probe_system_role() == "merge"
    assert len(server.requests) == 1
    assert engine.max_retries == 4


def test_the_system_role_probe_raises_when_the_endpoint_cannot_be_reached() -> None:
    with FakeOpenAI() as server:
        engine, _ = make_engine(server)
    with pytest.raises(LlmError, match="connection error"):
        engine.probe_system_role()


def test_system_role_auto_probes_once_per_endpoint(settings: Any) -> None:
    from qalab.llm import _PROBED, _PROBED_ROLES, get_engine

    _PROBED.clear()
    _PROBED_ROLES.clear()
    try:
        with FakeOpenAI(profile="llamacpp") as server:
            settings.QALAB_LLM_API_KEY = "sk-test"
            settings.QALAB_LLM_BASE_URL = server.base_url
            settings.QALAB_LLM_JSON_MODE = "auto"
            settings.QALAB_LLM_SYSTEM_ROLE = "auto"
            settings.QALAB_LLM_REPLAY_DIR = ""
            first = get_engine("openai", ledger=NullLedger())
            second = get_engine("openai", ledger=NullLedger())
            purposes = [b["messages"][-1]["content"] for b in server.requests]
    finally:
        _PROBED.clear()
        _PROBED_ROLES.clear()
    assert (first.json_mode, first.system_role) == ("json_object", "merge")
    assert (second.json_mode, second.system_role) == ("json_object", "merge")
    assert len(purposes) == 3  # json_schema (500), json_object, then the system-role probe


# ------------------------------------------------------------------ vLLM
def test_vllm_takes_json_schema() -> None:
    with FakeOpenAI(profile="vllm") as server:
        engine, _ = make_engine(server)
        assert engine.probe_json_mode() == "json_schema"


def test_vllm_refuses_a_request_over_the_context_length_with_its_400() -> None:
    with FakeOpenAI(profile="vllm", context_length=300) as server:
        engine, _ = make_engine(server)
        assert notes(engine).markdown  # ~20 prompt tokens + 200: fits
        with pytest.raises(LlmError, match="HTTP 400: This model's maximum context length is 300"):
            notes(engine, [{"role": "user", "content": "word " * 100}])  # 125 + 200 > 300
    assert len(server.requests) == 2  # a 400 is not retried


# ------------------------------------------------------------------ Ollama
def test_ollama_reports_no_prompt_tokens_for_a_cached_prompt() -> None:
    with FakeOpenAI(profile="ollama") as server:
        engine, _ = make_engine(server)
        first = engine.chat(
            role="simulator", purpose="turn", messages=MESSAGES, max_tokens=50, offline=str
        )
        again = engine.chat(
            role="simulator", purpose="turn", messages=MESSAGES, max_tokens=50, offline=str
        )
        other = engine.chat(
            role="simulator", purpose="turn", messages=MESSAGES[:1], max_tokens=50, offline=str
        )
    assert first.usage.prompt_tokens > 0 and not first.usage.estimated
    assert again.usage.prompt_tokens == 0  # "0 for completions where prompt evaluation is cached"
    assert other.usage.prompt_tokens > 0
    assert server.usage_total == sum(
        r.usage.prompt_tokens + r.usage.completion_tokens for r in (first, again, other)
    )


def test_a_cut_reply_whose_longer_retry_vllm_refuses_falls_back_and_is_counted() -> None:
    # ~20 prompt tokens + 200 fit in 300; the retry of a cut reply asks for 400 and gets the 400.
    with FakeOpenAI(profile="vllm", context_length=300, fault_script=["length"]) as server:
        engine, _ = make_engine(server)
        assert notes(engine).markdown == "offline"
    assert [b["max_tokens"] for b in server.requests] == [200, 400]
    assert statuses(engine.ledger) == ["length", "error:400", "fallback"]
