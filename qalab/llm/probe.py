"""Capability probes of an OpenAI-compatible server (`QALAB_LLM_JSON_MODE=auto`,
`QALAB_LLM_SYSTEM_ROLE=auto`): tiny metered requests (purpose `probe_json_mode`,
`probe_system_role`) sent once per endpoint and process (`qalab.llm.openai_engine_from_settings`
caches the answers), with no retries: a retried refusal only delays the answer."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pydantic import BaseModel

from qalab.llm.base import LlmError, Message, QuotaExhausted, Role
from qalab.llm.structured import JsonMode, SystemRole, canonical_json, truncate, validate_reply

if TYPE_CHECKING:
    from qalab.llm.openai_engine import OpenAIEngine
    from qalab.llm.replay import Reply

logger = logging.getLogger("qalab.llm.openai")

# A word a model would not write unless told to: the system-role probe asks for it in the
# system message only.
SYSTEM_ROLE_MARKER = "heliotrope"
SYSTEM_ROLE_MESSAGES: list[Message] = [
    {
        "role": "system",
        "content": f'In your JSON reply, set the field "word" to "{SYSTEM_ROLE_MARKER}".',
    },
    {"role": "user", "content": 'Reply with one JSON object: {"ok": true, "word": "..."}.'},
]


def _one_line(exc: LlmError) -> str:
    """The error for a log line: one line, cut. llama.cpp's server answers `json_schema` with a
    500 whose body is a multi-line pydantic error and a traceback."""
    return truncate(" ".join(str(exc).split()), 300)


class JsonProbe(BaseModel):
    ok: bool


class RoleProbe(BaseModel):
    ok: bool
    word: str


@contextmanager
def _without_retries(engine: OpenAIEngine) -> Iterator[None]:
    retries, engine.max_retries = engine.max_retries, 0
    try:
        yield
    finally:
        engine.max_retries = retries


def _ask(
    engine: OpenAIEngine,
    *,
    role: Role,
    purpose: str,
    messages: list[Message],
    output: type[BaseModel],
    json_mode: JsonMode,
) -> Reply:
    schema = output.model_json_schema()
    reply, _ = engine._complete(
        role=role,
        purpose=purpose,
        model=engine.model_for(role),
        messages=messages,
        max_tokens=16,
        schema=schema,
        schema_name="probe",
        schema_text=canonical_json(schema),
        attempt=0,
        json_mode=json_mode,
    )
    return reply


def probe_json_mode(engine: OpenAIEngine, *, role: Role = "generator") -> JsonMode:
    """The best JSON mode the server takes, tried in order `json_schema` -> `json_object`
    -> `text`. A mode is not supported when the server answers it with an HTTP error, 4xx
    or 5xx (llama.cpp's server answers 500 to `json_schema`), or with a reply that ignores
    the schema. One request per mode tried. An endpoint that cannot be reached at all raises
    (the run then ends `error` with the reason)."""
    with _without_retries(engine):
        for mode in ("json_schema", "json_object"):
            try:
                reply = _ask(
                    engine,
                    role=role,
                    purpose="probe_json_mode",
                    messages=[{"role": "user", "content": 'Reply with {"ok": true}.'}],
                    output=JsonProbe,
                    json_mode=mode,
                )
            except QuotaExhausted:
                raise
            except LlmError as exc:
                if exc.status_code is None:  # unreachable, timed out: not an answer
                    raise
                logger.info(
                    "probe: %s not supported by %s: %s", mode, engine.endpoint, _one_line(exc)
                )
                continue
            if validate_reply(reply.content, JsonProbe)[0] is not None:
                return mode
            logger.info("probe: %s ignored by %s (the reply is off-schema)", mode, engine.endpoint)
        return "text"


def probe_system_role(engine: OpenAIEngine, *, role: Role = "generator") -> SystemRole:
    """`system` when the model sees system messages, else `merge`. One request, in the
    engine's JSON mode, with the system messages sent as they are: the system message asks for
    a marker word in the reply, the user message does not. A reply without the marker (the chat
    template dropped the system message; llama.cpp's does for some models) or an HTTP error
    answer (a template that refuses the system role) means `merge`: the system text is put at
    the head of the first user message, which every template keeps. An endpoint that cannot be
    reached raises."""
    sent_as, engine.system_role = engine.system_role, "system"
    try:
        with _without_retries(engine):
            reply = _ask(
                engine,
                role=role,
                purpose="probe_system_role",
                messages=[dict(m) for m in SYSTEM_ROLE_MESSAGES],
                output=RoleProbe,
                json_mode=engine.json_mode,
            )
    except QuotaExhausted:
        raise
    except LlmError as exc:
        if exc.status_code is None:
            raise
        logger.info(
            "probe: %s refused a system message, merging them: %s",
            engine.endpoint,
            _one_line(exc),
        )
        return "merge"
    finally:
        engine.system_role = sent_as
    if SYSTEM_ROLE_MARKER in reply.content.lower():
        return "system"
    logger.info(
        "probe: the model at %s did not see the system message; merging system messages into "
        "the first user message",
        engine.endpoint,
    )
    return "merge"
