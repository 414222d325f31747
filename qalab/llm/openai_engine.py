"""The `openai` engine: any OpenAI-compatible chat-completions server through the official SDK.

One retry layer (ours; the SDK's is off), every HTTP attempt metered as one ledger row, and a
structured-output ladder that never lets an invalid reply become a result (DESIGN §6).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import openai
from pydantic import BaseModel, ValidationError

from qalab.llm.base import (
    Ledger,
    LlmError,
    M,
    Message,
    QuotaExhausted,
    Role,
    Usage,
)

logger = logging.getLogger("qalab.llm.openai")

JsonMode = Literal["json_schema", "json_object", "text"]
JSON_MODES: tuple[str, ...] = get_args(JsonMode)
DEFAULT_BASE_URL = "https://api.openai.com/v1"

# Conservative prompt estimate: one token per 3 characters plus framing per message, so the
# usage a server reports practically never exceeds the reservation.
CHARS_PER_TOKEN = 3
MESSAGE_FRAMING_TOKENS = 8
RETRYABLE_STATUS = frozenset({408, 409, 429})
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 8.0
RETRY_AFTER_MAX_SECONDS = 120.0
MAX_ERROR_TEXT = 2000
SCHEMA_INSTRUCTION = "Reply with one JSON object that validates against this JSON schema: "
REPAIR_INSTRUCTION = (
    "Your previous reply is not valid: {errors}\n"
    "Reply with only the corrected JSON object: no prose, no code fences."
)


def prompt_estimate(messages: list[Message], extra_text: str = "") -> int:
    """Conservative prompt tokens: ceil(chars / 3) + 8 per message (+ `extra_text`)."""
    chars = sum(len(m.get("content") or "") for m in messages) + len(extra_text)
    return math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_FRAMING_TOKENS * len(messages)


def schema_name(role: Role, output: type[BaseModel]) -> str:
    """`<role>_<Model>`, limited to what OpenAI accepts as a schema name ([A-Za-z0-9_-]{1,64})."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{role}_{output.__name__}")[:64]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def extract_json_object(text: str) -> Any:
    """The first balanced `{...}` in `text` that parses as JSON; ValueError when there is none."""
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        if end is not None:
            try:
                return json.loads(text[start:end])
            except ValueError:
                pass
        start = text.find("{", start + 1)
    raise ValueError("the reply contains no JSON object")


def _balanced_end(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _truncate(text: str, limit: int = MAX_ERROR_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_validation_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(p) for p in error.get("loc", ())) or "(root)"
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    return _truncate("; ".join(parts))


def validate_reply(
    raw: str, output: type[M], check: Callable[[M], None] | None = None
) -> tuple[M | None, str]:
    """(result, "") for a valid reply, else (None, what is wrong with it)."""
    try:
        obj = json.loads(raw)
    except ValueError:
        try:
            obj = extract_json_object(raw)
        except ValueError as exc:
            return None, f"the reply is not JSON ({exc})"
    try:
        result = output.model_validate(obj)
    except ValidationError as exc:
        return None, f"the JSON does not match the schema: {format_validation_errors(exc)}"
    if check is not None:
        try:
            check(result)
        except ValueError as exc:
            return None, _truncate(f"the JSON does not fit the task: {exc}")
    return result, ""


@dataclass(frozen=True)
class _Reply:
    content: str
    finish_reason: str


class OpenAIEngine:
    """Does each role's work with a model behind an OpenAI-compatible endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        ledger: Ledger,
        models: dict[str, str],
        base_url: str | None = None,
        api_key: str,
        json_mode: JsonMode = "json_schema",
        timeout: float = 60.0,
        max_retries: int = 4,
        replay_dir: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not api_key:
            raise LlmError("the openai engine needs an API key (QALAB_LLM_API_KEY)")
        if json_mode not in JSON_MODES:
            raise ValueError(f"json_mode {json_mode!r} must be one of {', '.join(JSON_MODES)}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.ledger = ledger
        self.models = dict(models)
        self.base_url = base_url or None
        self.json_mode: JsonMode = json_mode
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.replay_dir = Path(replay_dir) if replay_dir else None
        self.sleep = sleep
        # Our retry layer is the only one: the SDK must not retry behind the ledger's back.
        self.client = openai.OpenAI(
            api_key=api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=openai.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
        )

    def close(self) -> None:
        """Close the SDK client's connection pool."""
        self.client.close()

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/") or DEFAULT_BASE_URL

    def model_for(self, role: Role) -> str:
        try:
            return self.models[role]
        except KeyError:
            raise LlmError(f"no model configured for role {role!r}") from None

    # ------------------------------------------------------------------ the Engine protocol
    def run(
        self,
        *,
        role: Role,
        purpose: str,
        messages: list[Message],
        max_tokens: int,
        output: type[M],
        offline: Callable[[], M],
        check: Callable[[M], None] | None = None,
    ) -> M:
        model = self.model_for(role)
        schema = output.model_json_schema()
        schema_text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        request_messages = self.prepare_messages(messages, schema_text)
        attempt = 0
        reply: _Reply | None = None
        errors = ""
        for turn in range(2):  # the first reply, then at most one repair turn
            if reply is not None:
                request_messages = [
                    *request_messages,
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": REPAIR_INSTRUCTION.format(errors=errors)},
                ]
            # Record & replay works per request, repair turns included, so a replayed run
            # takes exactly the path the recorded one took and spends nothing.
            key = self.replay_key(model, request_messages, schema, max_tokens)
            reply = self._replay(key, role=role, purpose=purpose)
            if reply is None:
                reply, attempt = self._complete(
                    role=role,
                    purpose=purpose,
                    model=model,
                    messages=request_messages,
                    max_tokens=max_tokens,
                    schema=schema,
                    schema_name=schema_name(role, output),
                    schema_text=schema_text,
                    attempt=attempt,
                )
                self._store(key, model=model, role=role, reply=reply)
            if reply.finish_reason == "length":
                errors = (
                    f"the reply was cut off at the {max_tokens}-token limit (finish_reason "
                    "length); write a shorter, complete JSON object"
                )
            else:
                result, errors = validate_reply(reply.content, output, check)
                if result is not None:
                    return result
            # Counted in the report: a reply that did not validate (it gets one repair turn).
            self.ledger.record(
                role=role, purpose=purpose, status="invalid", raw=reply.content, detail=errors
            )
            logger.info("%s/%s: invalid reply (turn %d): %s", role, purpose, turn + 1, errors)

        assert reply is not None
        self.ledger.record(
            role=role, purpose=purpose, status="fallback", raw=reply.content, detail=errors
        )
        logger.warning(
            "%s/%s: falling back to the offline implementation: %s", role, purpose, errors
        )
        return offline()

    # ------------------------------------------------------------------ requests
    def prepare_messages(self, messages: list[Message], schema_text: str) -> list[Message]:
        """The messages as sent: with the schema in the system message unless json_schema."""
        prepared = [dict(m) for m in messages]
        if self.json_mode == "json_schema":
            return prepared
        instruction = SCHEMA_INSTRUCTION + schema_text
        if prepared and prepared[0].get("role") == "system":
            content = prepared[0].get("content") or ""
            prepared[0]["content"] = f"{content}\n\n{instruction}" if content else instruction
        else:
            prepared.insert(0, {"role": "system", "content": instruction})
        return prepared

    def request_options(
        self, *, schema: dict[str, Any], schema_name: str, json_mode: JsonMode | None = None
    ) -> dict[str, Any]:
        """The response-format part of a request for `json_mode` (default: the engine's)."""
        json_mode = json_mode or self.json_mode
        if json_mode == "json_schema":
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": False},
                }
            }
        if json_mode == "json_object":
            # The typed param knows no `schema` key; llama.cpp-style servers enforce it.
            return {"extra_body": {"response_format": {"type": "json_object", "schema": schema}}}
        return {}

    def _complete(
        self,
        *,
        role: Role,
        purpose: str,
        model: str,
        messages: list[Message],
        max_tokens: int,
        schema: dict[str, Any],
        schema_name: str,
        schema_text: str,
        attempt: int,
        json_mode: JsonMode | None = None,
    ) -> tuple[_Reply, int]:
        """One reply from the server, retrying transient failures; every attempt is metered."""
        json_mode = json_mode or self.json_mode
        # In json_schema mode the server puts the schema in the prompt itself: count it too.
        extra = schema_text if json_mode == "json_schema" else ""
        tokens = prompt_estimate(messages, extra) + max_tokens
        options = self.request_options(schema=schema, schema_name=schema_name, json_mode=json_mode)
        retries = 0
        while True:
            attempt += 1
            reservation = self.ledger.reserve(
                role=role, purpose=purpose, tokens=tokens, attempt=attempt
            )
            started = time.monotonic()

            def settle(
                usage: Usage | None,
                status: str,
                raw: str = "",
                detail: str = "",
                *,
                _reservation: int = reservation,
                _started: float = started,
            ) -> None:
                self.ledger.settle(
                    _reservation,
                    usage=usage,
                    status=status,
                    latency_ms=int((time.monotonic() - _started) * 1000),
                    raw=raw,
                    detail=_truncate(detail),
                )

            try:
                completion = self.client.chat.completions.create(
                    model=model,
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    temperature=0,
                    **options,
                )
            except openai.APIStatusError as exc:
                status_code = exc.status_code
                message = _server_message(exc)
                if status_code == 429 and _is_insufficient_quota(exc):
                    settle(Usage(0, 0, estimated=False), f"error:{status_code}", detail=message)
                    raise QuotaExhausted(
                        f"the OpenAI account has no quota left: {message} "
                        f"({self.endpoint}, role {role})"
                    ) from exc
                retryable = status_code in RETRYABLE_STATUS or status_code >= 500
                if not retryable:
                    settle(Usage(0, 0, estimated=False), f"error:{status_code}", detail=message)
                    raise LlmError(
                        f"{self.endpoint} refused the {role} request ({purpose}) with HTTP "
                        f"{status_code}: {message}"
                    ) from exc
                last = f"HTTP {status_code}: {message}"
                will_retry = retries < self.max_retries
                prefix = "retry" if will_retry else "error"
                settle(Usage(0, 0, estimated=False), f"{prefix}:{status_code}", detail=message)
                delay = _retry_after(exc) if will_retry else None
            except openai.APITimeoutError as exc:
                last = f"timed out after {self.timeout:g} s"
                will_retry = retries < self.max_retries
                settle(None, f"{'retry' if will_retry else 'error'}:timeout", detail=str(exc))
                delay = None
            except openai.APIConnectionError as exc:
                last = f"connection error: {exc}"
                will_retry = retries < self.max_retries
                settle(None, f"{'retry' if will_retry else 'error'}:connection", detail=str(exc))
                delay = None
            except Exception as exc:
                # The cost of a request that failed in an unknown way is unknown: charge it all.
                settle(None, "error:exception", detail=f"{type(exc).__name__}: {exc}")
                raise LlmError(
                    f"{self.endpoint} failed for role {role} ({purpose}): "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            else:
                choice = completion.choices[0] if completion.choices else None
                content = (choice.message.content if choice else None) or ""
                finish_reason = (choice.finish_reason if choice else None) or "stop"
                usage = None
                if completion.usage is not None:
                    usage = Usage(
                        completion.usage.prompt_tokens or 0,
                        completion.usage.completion_tokens or 0,
                        estimated=False,
                    )
                detail = ""
                if choice is None:
                    detail = "the response has no choices"
                elif choice.message.refusal:
                    detail = f"refusal: {choice.message.refusal}"
                settle(usage, "length" if finish_reason == "length" else "ok", content, detail)
                return _Reply(content=content, finish_reason=finish_reason), attempt

            if not will_retry:
                raise LlmError(
                    f"{self.endpoint} failed for role {role} ({purpose}) after "
                    f"{retries + 1} attempts; last status: {last}"
                )
            if delay is None:
                delay = min(BACKOFF_BASE_SECONDS * 2**retries, BACKOFF_MAX_SECONDS)
            retries += 1
            logger.info(
                "%s/%s: %s; retry %d/%d in %.1f s",
                role,
                purpose,
                last,
                retries,
                self.max_retries,
                delay,
            )
            self.sleep(delay)

    # ------------------------------------------------------------------ record & replay
    def replay_key(
        self, model: str, messages: list[Message], schema: dict[str, Any], max_tokens: int
    ) -> str:
        payload = {
            "model": model,
            "messages": messages,
            "schema": schema,
            "max_tokens": max_tokens,
            "json_mode": self.json_mode,
        }
        return hashlib.sha256(canonical_json(payload).encode()).hexdigest()

    def _replay_path(self, key: str) -> Path | None:
        return self.replay_dir / f"{key}.json" if self.replay_dir else None

    def _replay(self, key: str, *, role: Role, purpose: str) -> _Reply | None:
        path = self._replay_path(key)
        if path is None or not path.is_file():
            return None
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            reply = _Reply(content=str(record["raw"]), finish_reason=str(record["finish_reason"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("ignoring unreadable replay file %s: %s", path, exc)
            return None
        self.ledger.record(role=role, purpose=purpose, status="replayed", raw=reply.content)
        return reply

    def _store(self, key: str, *, model: str, role: Role, reply: _Reply) -> None:
        """Keep a reply the endpoint gave (valid or not) for replay, written atomically."""
        path = self._replay_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "key": key,
            "model": model,
            "role": role,
            "raw": reply.content,
            "finish_reason": reply.finish_reason,
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle, ensure_ascii=False, indent=1)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    # ------------------------------------------------------------------ capability probe
    def probe_json_mode(self, *, role: Role = "generator") -> JsonMode:
        """The best JSON mode the server takes: `json_schema`, or `json_object` after a 400.

        One tiny metered request (purpose `probe_json_mode`) with the engine's retry layer.
        """

        class Probe(BaseModel):
            ok: bool

        try:
            schema = Probe.model_json_schema()
            self._complete(
                role=role,
                purpose="probe_json_mode",
                model=self.model_for(role),
                messages=[{"role": "user", "content": 'Reply with {"ok": true}.'}],
                max_tokens=16,
                schema=schema,
                schema_name="probe",
                schema_text=canonical_json(schema),
                attempt=0,
                json_mode="json_schema",
            )
        except QuotaExhausted:
            raise
        except LlmError as exc:
            cause = exc.__cause__
            text = str(exc).lower()
            if isinstance(cause, openai.BadRequestError) and (
                "response_format" in text or "json_schema" in text
            ):
                return "json_object"
            raise
        return "json_schema"


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and body.get("message"):
        return _truncate(str(body["message"]))
    return _truncate(exc.message or str(exc))


def _is_insufficient_quota(exc: openai.APIStatusError) -> bool:
    body = exc.body if isinstance(exc.body, dict) else {}
    values = {exc.code, getattr(exc, "type", None), body.get("code"), body.get("type")}
    return "insufficient_quota" in values


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds from a `Retry-After` (or `retry-after-ms`) header, None when absent or a date."""
    headers = exc.response.headers
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return min(seconds, RETRY_AFTER_MAX_SECONDS)
    return None
