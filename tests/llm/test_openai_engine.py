"""The openai engine against a real OpenAI-compatible HTTP server on 127.0.0.1 (no database)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from qalab.llm.base import BudgetExceeded, LlmError, Message, NullLedger, QuotaExhausted, Role
from qalab.llm.openai_engine import OpenAIEngine
from qalab.llm.replay import replay_key
from qalab.llm.structured import canonical_json, extract_json_object, validate_reply
from tests.llm_server import INVALID_JSON_CONTENT, FakeOpenAI, instance_for

MODELS = {
    "generator": "gen-model",
    "simulator": "sim-model",
    "judge": "judge-model",
    "responder": "resp-model",
}
MESSAGES = [
    {"role": "system", "content": "You write short notes."},
    {"role": "user", "content": "Write a note about the spring offer."},
]


class Note(BaseModel):
    title: str
    priority: Literal["low", "high"]
    score: int = Field(ge=1, le=5)
    tags: list[str]


OFFLINE_NOTE = Note(title="offline", priority="low", score=1, tags=["offline"])


class RecordingLedger(NullLedger):
    """A NullLedger that also remembers every reservation it granted."""

    def __init__(self, budget: int | None = None) -> None:
        super().__init__(budget=budget)
        self.reservations: list[dict[str, Any]] = []

    def reserve(self, *, role: Role, purpose: str, tokens: int, attempt: int = 1) -> int:
        rid = super().reserve(role=role, purpose=purpose, tokens=tokens, attempt=attempt)
        self.reservations.append({"role": role, "tokens": tokens, "attempt": attempt})
        return rid


def make_engine(
    server: FakeOpenAI, ledger: RecordingLedger | None = None, **options: Any
) -> tuple[OpenAIEngine, list[float]]:
    sleeps: list[float] = []
    engine = OpenAIEngine(
        ledger=ledger if ledger is not None else RecordingLedger(),
        models=MODELS,
        base_url=server.base_url,
        api_key="test-key",
        sleep=sleeps.append,
        **options,
    )
    return engine, sleeps


def run(
    engine: OpenAIEngine,
    *,
    role: Role = "generator",
    check: Callable[[Note], None] | None = None,
    max_tokens: int = 200,
    messages: list[Message] = MESSAGES,
) -> Note:
    return engine.run(
        role=role,
        purpose="note",
        messages=messages,
        max_tokens=max_tokens,
        output=Note,
        offline=lambda: OFFLINE_NOTE,
        check=check,
    )


def statuses(ledger: NullLedger) -> list[str]:
    """Statuses of the ledger rows, without the zero-token `invalid` annotations."""
    return [call["status"] for call in ledger.calls if call["status"] != "invalid"]


def invalid_count(ledger: NullLedger) -> int:
    return sum(call["status"] == "invalid" for call in ledger.calls)


def metered_rows(ledger: NullLedger) -> list[dict[str, Any]]:
    return [c for c in ledger.calls if c["status"] not in ("replayed", "fallback", "invalid")]


def assert_one_request_per_row(server: FakeOpenAI, ledger: NullLedger) -> None:
    # The SDK never retries on its own: every HTTP request is one ledger row.
    assert len(server.requests) == len(metered_rows(ledger))
    assert {h.get("x-stainless-retry-count", "0") for h in server.request_headers} <= {"0"}


def test_json_schema_request_carries_schema_and_role_model() -> None:
    with FakeOpenAI() as server:
        engine, _ = make_engine(server)
        result = run(engine, role="judge")
        (body,) = server.requests
    assert isinstance(result, Note)
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 200
    assert body["messages"] == MESSAGES
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "judge_Note", "schema": Note.model_json_schema(), "strict": False},
    }
    assert statuses(engine.ledger) == ["ok"]
    assert json.loads(engine.ledger.calls[0]["raw"]) == result.model_dump()


def test_json_object_mode_sends_schema_key_and_works_where_json_schema_is_rejected() -> None:
    with FakeOpenAI(reject_json_schema=True) as server:
        strict, _ = make_engine(server)
        with pytest.raises(LlmError, match="400"):
            run(strict)
        assert len(server.requests) == 1  # a 400 is not retried
        assert strict.probe_json_mode() == "json_object"

        engine, _ = make_engine(server, json_mode="json_object")
        result = run(engine)
        body = server.requests[-1]
    assert isinstance(result, Note)
    assert body["response_format"] == {"type": "json_object", "schema": Note.model_json_schema()}
    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You write short notes.")
    assert (
        "Reply with one JSON object that validates against this JSON schema:" in (system["content"])
    )
    assert statuses(engine.ledger) == ["ok"]


def test_probe_json_mode_keeps_json_schema_when_accepted() -> None:
    with FakeOpenAI() as server:
        engine, _ = make_engine(server)
        assert engine.probe_json_mode() == "json_schema"
        assert server.requests[0]["response_format"]["type"] == "json_schema"
    assert engine.json_mode == "json_schema"


def test_text_mode_puts_the_schema_in_a_new_system_message() -> None:
    # Without a response_format the server cannot know the schema: the brain plays the model.
    with FakeOpenAI(brain=lambda body: instance_for(Note.model_json_schema())) as server:
        engine, _ = make_engine(server, json_mode="text")
        result = run(engine, messages=[{"role": "user", "content": "Write a note."}])
        (body,) = server.requests
    assert isinstance(result, Note)
    assert "response_format" not in body
    assert body["messages"][0]["role"] == "system"
    assert '"priority"' in body["messages"][0]["content"]
    assert body["messages"][1] == {"role": "user", "content": "Write a note."}


def test_ledger_tokens_equal_server_usage_under_faults() -> None:
    with FakeOpenAI(seed=3, rate_429=0.25, rate_500=0.15, rate_invalid_json=0.1) as server:
        ledger = RecordingLedger()
        engine, _ = make_engine(server, ledger=ledger, max_retries=20)
        for role in ("generator", "simulator", "judge", "responder", "judge", "generator"):
            run(engine, role=role)
        # NullLedger clips usage at the reservation: equality means no reply exceeded its
        # (conservative) reservation.
        assert ledger.used == server.usage_total > 0
        assert ledger.reserved == 0
        assert_one_request_per_row(server, ledger)
        assert server.fault_counts["429"] + server.fault_counts["500"] > 0


def test_429_honours_retry_after_and_is_two_rows() -> None:
    with FakeOpenAI(fault_script=["429"]) as server:
        engine, sleeps = make_engine(server)
        result = run(engine)
        assert_one_request_per_row(server, engine.ledger)
    assert isinstance(result, Note)
    assert sleeps == [1.0]
    assert statuses(engine.ledger) == ["retry:429", "ok"]
    assert engine.ledger.calls[0]["tokens"] == 0
    assert [r["attempt"] for r in engine.ledger.reservations] == [1, 2]


def test_500_is_retried_with_backoff() -> None:
    with FakeOpenAI(fault_script=["500", "500", "ok"]) as server:
        engine, sleeps = make_engine(server)
        run(engine)
        assert_one_request_per_row(server, engine.ledger)
    assert sleeps == [0.5, 1.0]
    assert statuses(engine.ledger) == ["retry:500", "retry:500", "ok"]


def test_timeout_is_retried_and_charged_in_full() -> None:
    with FakeOpenAI(fault_script=["timeout"], timeout_sleep=1.0) as server:
        engine, sleeps = make_engine(server, timeout=0.3)
        run(engine)
        assert len(server.requests) == 2
    ledger = engine.ledger
    assert statuses(ledger) == ["retry:timeout", "ok"]
    assert sleeps == [0.5]
    # Unknown cost: the timed-out attempt is charged its whole reservation.
    assert ledger.calls[0]["tokens"] == ledger.reservations[0]["tokens"]


def test_insufficient_quota_fails_fast() -> None:
    with FakeOpenAI(fault_script=["quota_429"]) as server:
        engine, sleeps = make_engine(server)
        with pytest.raises(QuotaExhausted, match="no quota left"):
            run(engine)
        assert len(server.requests) == 1
    assert sleeps == []
    assert statuses(engine.ledger) == ["error:429"]


def test_retries_exhausted_raise_llm_error() -> None:
    with FakeOpenAI(fault_script=["500", "429", "500"]) as server:
        engine, sleeps = make_engine(server, max_retries=2)
        with pytest.raises(LlmError) as info:
            run(engine, role="simulator")
        assert len(server.requests) == 3
        base_url = server.base_url
    message = str(info.value)
    assert base_url in message
    assert "simulator" in message
    assert "HTTP 500" in message
    assert sleeps == [0.5, 1.0]
    assert statuses(engine.ledger) == ["retry:500", "retry:429", "error:500"]


def test_invalid_json_gets_one_repair_turn() -> None:
    with FakeOpenAI(fault_script=["invalid_json", "ok"]) as server:
        engine, _ = make_engine(server)
        result = run(engine)
        first, second = server.requests
        assert_one_request_per_row(server, engine.ledger)
    assert isinstance(result, Note)
    assert statuses(engine.ledger) == ["ok", "ok"]
    assert engine.ledger.calls[0]["raw"] == INVALID_JSON_CONTENT
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert second["messages"][-2] == {"role": "assistant", "content": INVALID_JSON_CONTENT}
    repair = second["messages"][-1]
    assert repair["role"] == "user"
    assert "not JSON" in repair["content"]
    assert "corrected JSON object" in repair["content"]


def test_invalid_twice_falls_back_to_offline() -> None:
    with FakeOpenAI(fault_script=["invalid_json", "invalid_json"]) as server:
        engine, _ = make_engine(server)
        result = run(engine)
        assert len(server.requests) == 2
    assert result is OFFLINE_NOTE
    assert statuses(engine.ledger) == ["ok", "ok", "fallback"]
    assert invalid_count(engine.ledger) == 2
    fallback = engine.ledger.calls[-1]
    assert fallback["tokens"] == 0
    assert fallback["raw"] == INVALID_JSON_CONTENT


def test_schema_violation_is_repaired_with_the_errors() -> None:
    def brain(body: dict[str, Any]) -> str | dict[str, Any] | None:
        if body["messages"][-1]["content"].startswith("Your previous reply"):
            return None  # a valid instance
        return {"title": "x", "priority": "urgent", "score": 9, "tags": []}

    with FakeOpenAI(brain=brain) as server:
        engine, _ = make_engine(server)
        result = run(engine)
        repair = server.requests[1]["messages"][-1]["content"]
    assert isinstance(result, Note)
    assert "priority" in repair
    assert "score" in repair


def test_check_failure_triggers_the_repair() -> None:
    def check(note: Note) -> None:
        if note.title != "fixed":
            raise ValueError("the title must name the offer")

    def brain(body: dict[str, Any]) -> str | dict[str, Any] | None:
        if body["messages"][-1]["content"].startswith("Your previous reply"):
            return {"title": "fixed", "priority": "high", "score": 2, "tags": ["spring"]}
        return None

    with FakeOpenAI(brain=brain) as server:
        engine, _ = make_engine(server)
        result = run(engine, check=check)
        repair = server.requests[1]["messages"][-1]["content"]
    assert result.title == "fixed"
    assert "the title must name the offer" in repair
    assert statuses(engine.ledger) == ["ok", "ok"]


def test_a_reply_cut_at_max_tokens_is_asked_again_with_twice_the_room() -> None:
    with FakeOpenAI(fault_script=["length", "ok"]) as server:
        engine, _ = make_engine(server)
        result = run(engine, max_tokens=200)
        first, second = server.requests
    assert isinstance(result, Note)
    assert statuses(engine.ledger) == ["length", "ok"]
    assert invalid_count(engine.ledger) == 1  # the cut reply is counted, not a fallback
    # The same request, not a repair turn quoting the cut reply; the limit doubled.
    assert second["messages"] == first["messages"]
    assert (first["max_tokens"], second["max_tokens"]) == (200, 400)


def test_prose_around_the_json_is_extracted_without_a_repair() -> None:
    def brain(body: dict[str, Any]) -> str | dict[str, Any] | None:
        note = {"title": "spring", "priority": "low", "score": 3, "tags": ["a {b}"]}
        return f'Here it is:\n```json\n{json.dumps(note)}\n```\nAnything else? {{"no": 1}}'

    with FakeOpenAI(brain=brain) as server:
        engine, _ = make_engine(server)
        result = run(engine)
        assert len(server.requests) == 1
    assert result.tags == ["a {b}"]


def test_missing_usage_charges_the_full_reservation() -> None:
    with FakeOpenAI(report_usage=False) as server:
        ledger = RecordingLedger()
        engine, _ = make_engine(server, ledger=ledger)
        run(engine)
        assert server.usage_total == 0
    assert ledger.used == ledger.reservations[0]["tokens"] > 200


def test_budget_exceeded_before_any_request() -> None:
    with FakeOpenAI() as server:
        ledger = RecordingLedger(budget=150)
        engine, _ = make_engine(server, ledger=ledger)
        with pytest.raises(BudgetExceeded):
            run(engine, max_tokens=200)
        assert server.requests == []
    assert ledger.calls == []
    assert ledger.used == ledger.reserved == 0


def test_budget_exceeded_during_the_repair_turn_propagates() -> None:
    with FakeOpenAI(fault_script=["500", "ok", "invalid_json"]) as server:
        engine, _ = make_engine(server)
        first = run(engine)  # learn what one attempt reserves
        reservation = engine.ledger.reservations[-1]["tokens"]
        # A failed HTTP attempt costs nothing, so the retry fits; the longer repair turn does not.
        ledger = RecordingLedger(budget=reservation + 10)
        engine, _ = make_engine(server, ledger=ledger)
        with pytest.raises(BudgetExceeded):
            run(engine)
        assert len(server.requests) == 3
    assert isinstance(first, Note)
    assert statuses(ledger) == ["ok"]
    assert ledger.reserved == 0


def test_replay_returns_the_recorded_reply_without_a_request(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        ledger = RecordingLedger()
        engine, _ = make_engine(server, ledger=ledger, replay_dir=tmp_path)
        first = run(engine)
        used = ledger.used
        files = list(tmp_path.glob("*.json"))
        assert len(files) == 1
        assert json.loads(files[0].read_text())["model"] == "gen-model"

        again, _ = make_engine(server, ledger=ledger, replay_dir=tmp_path)
        second = run(again)
        assert len(server.requests) == 1
        # Another prompt is another key: it goes to the server.
        run(again, messages=[*MESSAGES, {"role": "user", "content": "Shorter."}])
        assert len(server.requests) == 2
    assert second == first
    assert statuses(ledger) == ["ok", "replayed", "ok"]
    assert ledger.calls[1]["tokens"] == 0
    assert ledger.calls[1]["raw"] == ledger.calls[0]["raw"]
    assert ledger.used > used == ledger.calls[0]["tokens"]
    assert not list(tmp_path.glob("*.tmp"))


def test_replay_key_depends_on_the_json_mode(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        engine, _ = make_engine(server, replay_dir=tmp_path)
        run(engine)
        other, _ = make_engine(server, replay_dir=tmp_path, json_mode="json_object")
        run(other)
        assert len(server.requests) == 2


def test_a_later_trial_records_and_replays_its_own_reply(tmp_path: Path) -> None:
    """A run's later trials send the requests its first trial sent: each keeps its own
    recording (`replay_variant`), so a recorded run of K trials replays K samples, not one."""
    with FakeOpenAI() as server:
        first, _ = make_engine(server, replay_dir=tmp_path)
        run(first)
        second, _ = make_engine(server, replay_dir=tmp_path)
        second.replay_variant = "trial 2"
        run(second)
        assert len(server.requests) == 2  # not the first trial's recording
        assert len(list(tmp_path.glob("*.json"))) == 2
        again, _ = make_engine(server, replay_dir=tmp_path)
        again.replay_variant = "trial 2"
        run(again)
        assert len(server.requests) == 2  # its own recording, replayed
    # Without a variant the key is the one recordings had before variants existed.
    payload = {"model": "m", "messages": MESSAGES, "schema": {}, "max_tokens": 5}
    before = hashlib.sha256(canonical_json({**payload, "json_mode": "text"}).encode()).hexdigest()
    key = replay_key(model="m", messages=MESSAGES, schema={}, max_tokens=5, json_mode="text")
    assert key == before
    assert replay_key(**payload, json_mode="text", variant="trial 2") != before


def test_validate_reply_and_extraction() -> None:
    assert extract_json_object('noise {"a": "}"} tail {"b": 2}') == {"a": "}"}
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("no braces here")
    result, errors = validate_reply('{"title": 1}', Note)
    assert result is None
    assert "title" in errors
    assert "priority" in errors


class Slot(BaseModel):
    day: dt.date
    at: dt.time
    email: str = Field(json_schema_extra={"format": "email"})


class Booking(BaseModel):
    name: str = Field(min_length=12)
    kind: Literal["new", "returning"]
    fixed: Literal["yes"]
    seats: int = Field(ge=2, le=4)
    ratio: float = Field(ge=0.5)
    confirmed: bool
    slot: Slot
    alternatives: list[Slot] = Field(min_length=2)
    note: str | None = None
    backup: Slot | None = None
    nothing: None = None


def test_the_fake_server_generates_valid_instances_from_schemas() -> None:
    value = instance_for(Booking.model_json_schema())
    booking = Booking.model_validate(value)
    assert len(booking.alternatives) == 2
    assert booking.seats == 2
    assert booking.kind == "new"
    assert list(value)[:3] == ["name", "kind", "fixed"]  # required first
    words = [booking.name, booking.note or ""]
    assert all(not any(ch.isdigit() for ch in w) for w in words)
    assert booking.slot.email == "alex@example.com"
    assert instance_for(None) == {}


def test_get_engine_builds_openai_from_settings(settings: Any, tmp_path: Path) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from qalab.llm import OpenAIEngine as Exported
    from qalab.llm import get_engine

    assert Exported is OpenAIEngine
    settings.QALAB_LLM_API_KEY = ""
    with pytest.raises(ImproperlyConfigured, match="QALAB_LLM_API_KEY"):
        get_engine("openai", ledger=NullLedger())

    settings.QALAB_LLM_API_KEY = "sk-test"
    settings.QALAB_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QALAB_JUDGE_MODEL = "judge-x"
    settings.QALAB_LLM_JSON_MODE = "json_object"
    settings.QALAB_LLM_TIMEOUT_SECONDS = 7
    settings.QALAB_LLM_MAX_RETRIES = 1
    settings.QALAB_LLM_REPLAY_DIR = str(tmp_path)
    engine = get_engine("openai", ledger=NullLedger())
    assert isinstance(engine, OpenAIEngine)
    assert engine.name == "openai"
    assert engine.models["judge"] == "judge-x"
    assert engine.json_mode == "json_object"
    assert engine.timeout == 7.0
    assert engine.max_retries == 1
    assert engine.replay_dir == tmp_path
    assert engine.endpoint == "http://127.0.0.1:9/v1"
    with pytest.raises(ValueError, match="unknown LLM engine"):
        get_engine("nope", ledger=NullLedger())


def test_replay_takes_the_recorded_path_through_a_repair_turn(tmp_path: Path) -> None:
    with FakeOpenAI(fault_script=["invalid_json", "invalid_json"]) as server:
        ledger = RecordingLedger()
        engine, _ = make_engine(server, ledger=ledger, replay_dir=tmp_path)
        assert run(engine) is OFFLINE_NOTE  # invalid twice: the recorded path ends in fallback
        replayer, _ = make_engine(server, ledger=RecordingLedger(), replay_dir=tmp_path)
        assert run(replayer) is OFFLINE_NOTE
        assert len(server.requests) == 2  # the replay sent nothing
    assert statuses(replayer.ledger) == ["replayed", "replayed", "fallback"]
    assert replayer.ledger.used == 0
    assert invalid_count(replayer.ledger) == 2


def test_the_probe_takes_a_500_to_json_schema_as_not_supported_without_retrying() -> None:
    # llama.cpp's server answers HTTP 500 (not 400) to a json_schema request.
    with FakeOpenAI(reject_json_schema=True, json_schema_status=500) as server:
        engine, _ = make_engine(server)
        assert engine.probe_json_mode() == "json_object"
        modes = [b["response_format"]["type"] for b in server.requests]
    assert modes == ["json_schema", "json_object"]  # one request each: no retried 500s
    assert engine.max_retries == 4  # the engine's own retries are back for real work


def test_the_probe_falls_back_to_text_when_every_mode_is_ignored() -> None:
    # A server that takes response_format but answers prose: neither JSON mode is honoured.
    with FakeOpenAI(brain=lambda body: "Sure! OK.") as server:
        engine, _ = make_engine(server)
        assert engine.probe_json_mode() == "text"
        assert [b["response_format"]["type"] for b in server.requests] == [
            "json_schema",
            "json_object",
        ]


def test_the_probe_raises_when_the_endpoint_cannot_be_reached() -> None:
    with FakeOpenAI() as server:
        engine, _ = make_engine(server)
    # The server is stopped: a connection error is not an answer about JSON modes.
    with pytest.raises(LlmError, match="connection error"):
        engine.probe_json_mode()


@pytest.mark.parametrize(
    ("system_role", "roles", "first"),
    [
        ("system", ["system", "user"], "You write short notes."),
        ("user", ["user", "user"], "You write short notes."),
        ("merge", ["user"], "You write short notes."),
    ],
)
def test_system_messages_reach_templates_that_drop_them(system_role, roles, first) -> None:
    """QALAB_LLM_SYSTEM_ROLE: a chat template that drops system messages (llama.cpp's for some
    models) would leave the model ~20 tokens of prompt; `user`/`merge` send them as user text."""
    with FakeOpenAI() as server:
        engine, _ = make_engine(server, system_role=system_role, json_mode="json_object")
        run(engine)
        body = server.requests[-1]
    assert [m["role"] for m in body["messages"]] == roles
    assert body["messages"][0]["content"].startswith(first)
    if system_role == "merge":  # the system text heads the user's own message
        assert "Reply with one JSON object" in body["messages"][0]["content"]
        assert body["messages"][0]["content"].endswith("\n\n" + MESSAGES[-1]["content"])


def test_an_unknown_system_role_is_refused() -> None:
    with FakeOpenAI() as server, pytest.raises(ValueError, match="system_role"):
        make_engine(server, system_role="developer")
