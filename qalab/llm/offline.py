"""The offline engine: each role's deterministic implementation, metered in estimated tokens."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from qalab.llm.base import (
    ChatReply,
    Ledger,
    M,
    Message,
    Role,
    Usage,
    estimate_message_tokens,
    estimate_tokens,
)

T = TypeVar("T")


def render_output(value: object) -> str:
    """The text an LLM would have written to produce `value`."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, list) and all(isinstance(v, BaseModel) for v in value):
        return "[" + ",".join(v.model_dump_json() for v in value) + "]"
    return json.dumps(value, default=str, separators=(",", ":"))


class OfflineEngine:
    """Deterministic, no network, no key; budgets behave as with a real model."""

    name = "offline"
    replay_variant = ""  # nothing is recorded or replayed

    def __init__(self, *, ledger: Ledger) -> None:
        self.ledger = ledger

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
        result, _ = self._metered(
            role=role, purpose=purpose, messages=messages, max_tokens=max_tokens,
            produce=offline, render=render_output,
        )  # fmt: skip
        return result

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
        text, usage = self._metered(
            role=role, purpose=purpose, messages=messages, max_tokens=max_tokens,
            produce=offline, render=str,
        )  # fmt: skip
        finish = "stop" if estimate_tokens(text) <= max_tokens else "length"
        return ChatReply(text=text, usage=usage, finish_reason=finish)

    def _metered(
        self,
        *,
        role: Role,
        purpose: str,
        messages: list[Message],
        max_tokens: int,
        produce: Callable[[], T],
        render: Callable[[T], str],
    ) -> tuple[T, Usage]:
        """Run `produce` as a call of the meter: reserve what a model call would, settle the
        text it read and wrote as estimated tokens. A real model stops at max_tokens
        (finish_reason "length"); the meter does the same."""
        prompt_tokens = estimate_message_tokens(messages)
        reservation = self.ledger.reserve(
            role=role, purpose=purpose, tokens=prompt_tokens + max_tokens
        )
        started = time.monotonic()
        try:
            result = produce()
        except Exception:
            self.ledger.settle(
                reservation,
                usage=Usage(prompt_tokens, 0, estimated=True),
                status="error",
                latency_ms=int((time.monotonic() - started) * 1000),
            )
            raise
        completion = estimate_tokens(render(result))
        usage = Usage(prompt_tokens, min(completion, max_tokens), estimated=True)
        self.ledger.settle(
            reservation,
            usage=usage,
            status="ok" if completion <= max_tokens else "length",
            latency_ms=int((time.monotonic() - started) * 1000),
        )
        return result, usage
