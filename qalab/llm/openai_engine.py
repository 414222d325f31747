"""The `openai` engine: any OpenAI-compatible chat-completions server through the official SDK.

One retry layer (ours; the SDK's is off), every HTTP attempt metered as one ledger row, and a
structured-output ladder that never lets an invalid reply become a result (DESIGN §6). Reading
a reply as a validated object lives in `qalab.llm.structured`, record & replay in
`qalab.llm.replay`.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai

from qalab.llm.base import (
    ChatReply,
    Ledger,
    LlmError,
    M,
    Message,
    QuotaExhausted,
    Role,
    Usage,
)
from qalab.llm.clients import shared_client
from qalab.llm.replay import Reply, load_reply, replay_key, store_reply
from qalab.llm.structured import (
    JSON_MODES,
    REPAIR_INSTRUCTION,
    SYSTEM_ROLES,
    JsonMode,
    SystemRole,
    adapt_system_role,
    prepare_messages,
    request_options,
    schema_name,
    truncate,
    validate_reply,
)

logger = logging.getLogger("qalab.llm.openai")

# A reply cut at its max_tokens is asked again once with twice the limit, up to this.
LENGTH_RETRY_MAX_TOKENS = 8192

DEFAULT_BASE_URL = "https://api.openai.com/v1"

# Conservative prompt estimate: one token per 3 characters plus framing per message, so the
# usage a server reports practically never exceeds the reservation.
CHARS_PER_TOKEN = 3
MESSAGE_FRAMING_TOKENS = 8
RETRYABLE_STATUS = frozenset({408, 409, 429})
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 8.0
RETRY_AFTER_MAX_SECONDS = 120.0


def prompt_estimate(messages: list[Message], extra_text: str = "") -> int:
    """Conservative prompt tokens: ceil(chars / 3) + 8 per message (+ `extra_text`)."""
    chars = sum(len(m.get("content") or "") for m in messages) + len(extra_text)
    return math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_FRAMING_TOKENS * len(messages)


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
        system_role: SystemRole = "system",
    ) -> None:
        if not api_key:
            raise LlmError("the openai engine needs an API key (QALAB_LLM_API_KEY)")
        if json_mode not in JSON_MODES:
            raise ValueError(f"json_mode {json_mode!r} must be one of {', '.join(JSON_MODES)}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if system_role not in SYSTEM_ROLES:
            raise ValueError(f"system_role {system_role!r} must be one of {SYSTEM_ROLES}")
        self.system_role: SystemRole = system_role
        self.ledger = ledger
        self.models = dict(models)
        self.base_url = base_url or None
        self.json_mode: JsonMode = json_mode
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.replay_dir = Path(replay_dir) if replay_dir else None
        self.replay_variant = ""
        self.sleep = sleep
        # One client (and connection pool) per endpoint, key and timeout in this process, with
        # the SDK's retries off: our retry layer is the only one, metering every attempt.
        self.client = shared_client(base_url=self.base_url, api_key=api_key, timeout=self.timeout)

    def close(self) -> None:
        """Nothing to release: the client and its kept-alive connections are shared with the
        process's other engines of this endpoint (`qalab.llm.clients.close_shared_clients`)."""

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
        request_messages = prepare_messages(messages, schema_text, self.json_mode)
        attempt = 0
        reply: Reply | None = None
        errors = ""
        for turn in range(2):  # the first reply, then at most one repair turn
            length_retry = reply is not None and reply.finish_reason == "length"
            if length_retry:
                # Cut off at the limit: the same request once more with room to finish (a
                # repair turn would resend the cut reply and leave even less room).
                max_tokens = min(max_tokens * 2, max(max_tokens, LENGTH_RETRY_MAX_TOKENS))
            elif reply is not None:
                request_messages = [
                    *request_messages,
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": REPAIR_INSTRUCTION.format(errors=errors)},
                ]
            # Record & replay works per request, repair turns included, so a replayed run
            # takes exactly the path the recorded one took and spends nothing.
            key = replay_key(
                model=model,
                messages=request_messages,
                schema=schema,
                max_tokens=max_tokens,
                json_mode=self.json_mode,
                variant=self.replay_variant,
            )
            replayed = self._replay(key, role=role, purpose=purpose)
            if replayed is not None:
                reply = replayed
            else:
                try:
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
                except LlmError as exc:
                    # A server may refuse the larger limit (vLLM: prompt + max_tokens over the
                    # context length is a 400): the task falls back, counted, as a cut reply
                    # would have; the run goes on.
                    refused = exc.status_code is not None and 400 <= exc.status_code < 500
                    if not (length_retry and refused) or isinstance(exc, QuotaExhausted):
                        raise
                    errors = f"{errors}; the retry with {max_tokens} tokens was refused: {exc}"
                    break
                store_reply(self.replay_dir, key, model=model, role=role, reply=reply)
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

    def chat(
        self,
        *,
        role: Role,
        purpose: str,
        messages: list[Message],
        max_tokens: int,
        offline: Callable[[], str],
        model: str | None = None,
    ) -> ChatReply:
        """The model's free text for `messages`: no response format, kept as written (a reply
        cut off at `max_tokens` too; its ledger row says `length`). Replayed when recorded."""
        model = model or self.model_for(role)
        key = replay_key(
            model=model,
            messages=messages,
            schema={},
            max_tokens=max_tokens,
            json_mode="text",
            variant=self.replay_variant,
        )
        reply = self._replay(key, role=role, purpose=purpose)
        if reply is not None:
            return ChatReply(reply.content, Usage(0, 0, estimated=False), reply.finish_reason)
        reply, _ = self._complete(
            role=role,
            purpose=purpose,
            model=model,
            messages=[dict(m) for m in messages],
            max_tokens=max_tokens,
            schema={},
            schema_name="",
            schema_text="",
            attempt=0,
            json_mode="text",
        )
        store_reply(self.replay_dir, key, model=model, role=role, reply=reply)
        # A server that reports no usage is charged the whole reservation by the ledger; the
        # turn shows an estimate in that case.
        usage = reply.usage or Usage(
            prompt_estimate(messages), min(max_tokens, len(reply.content) // 4), estimated=True
        )
        return ChatReply(reply.content, usage, reply.finish_reason)

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
    ) -> tuple[Reply, int]:
        """One reply from the server, retrying transient failures; every attempt is metered."""
        json_mode = json_mode or self.json_mode
        # In json_schema mode the server puts the schema in the prompt itself: count it too.
        extra = schema_text if json_mode == "json_schema" else ""
        tokens = prompt_estimate(messages, extra) + max_tokens
        options = request_options(schema=schema, schema_name=schema_name, json_mode=json_mode)
        retries = 0
        last_status: int | None = None
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
                    detail=truncate(detail),
                )

            try:
                completion = self.client.chat.completions.create(
                    model=model,
                    messages=adapt_system_role(messages, self.system_role),  # type: ignore[arg-type]
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
                        f"{status_code}: {message}",
                        status_code=status_code,
                    ) from exc
                last = f"HTTP {status_code}: {message}"
                last_status = status_code
                will_retry = retries < self.max_retries
                prefix = "retry" if will_retry else "error"
                settle(Usage(0, 0, estimated=False), f"{prefix}:{status_code}", detail=message)
                delay = _retry_after(exc) if will_retry else None
            except openai.APITimeoutError as exc:
                last, last_status = f"timed out after {self.timeout:g} s", None
                will_retry = retries < self.max_retries
                settle(None, f"{'retry' if will_retry else 'error'}:timeout", detail=str(exc))
                delay = None
            except openai.APIConnectionError as exc:
                last, last_status = f"connection error: {exc}", None
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
                return Reply(content=content, finish_reason=finish_reason, usage=usage), attempt

            if not will_retry:
                raise LlmError(
                    f"{self.endpoint} failed for role {role} ({purpose}) after "
                    f"{retries + 1} attempts; last status: {last}",
                    status_code=last_status,
                )
            if delay is None:
                delay = min(BACKOFF_BASE_SECONDS * 2**retries, BACKOFF_MAX_SECONDS)
            retries += 1
            logger.info(  # one line per retry: a server's multi-line error body is cut
                "%s/%s: %s; retry %d/%d in %.1f s",
                role,
                purpose,
                (last.strip().splitlines() or [""])[0],
                retries,
                self.max_retries,
                delay,
            )
            self.sleep(delay)

    # ------------------------------------------------------------------ record & replay
    def _replay(self, key: str, *, role: Role, purpose: str) -> Reply | None:
        """The reply recorded for `key` (qalab.llm.replay), metered as replayed."""
        reply = load_reply(self.replay_dir, key)
        if reply is not None:
            self.ledger.record(role=role, purpose=purpose, status="replayed", raw=reply.content)
        return reply

    # ------------------------------------------------------------------ capability probes
    def probe_json_mode(self, *, role: Role = "generator") -> JsonMode:
        """The best JSON mode the server takes (`qalab.llm.probe.probe_json_mode`)."""
        from qalab.llm.probe import probe_json_mode

        return probe_json_mode(self, role=role)

    def probe_system_role(self, *, role: Role = "generator") -> SystemRole:
        """`system`, or `merge` when the model does not see system messages
        (`qalab.llm.probe.probe_system_role`)."""
        from qalab.llm.probe import probe_system_role

        return probe_system_role(self, role=role)


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and body.get("message"):
        return truncate(str(body["message"]))
    return truncate(exc.message or str(exc))


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
