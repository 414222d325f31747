"""Engine and ledger interfaces shared by every role that spends tokens."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

Role = Literal["generator", "simulator", "judge", "responder"]
ROLES: tuple[Role, ...] = ("generator", "simulator", "judge", "responder")
Message = dict[str, str]
T = TypeVar("T")

# Chat formats add a few tokens of framing per message (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 4


class BudgetExceeded(Exception):
    """A reservation was denied: the run's token budget cannot cover the next call."""


def estimate_tokens(text: str) -> int:
    """Tokens a tokenizer of the GPT family would count, estimated as one per 4 characters."""
    return math.ceil(len(text) / 4) if text else 0


def estimate_message_tokens(messages: list[Message]) -> int:
    return sum(estimate_tokens(m.get("content", "")) + MESSAGE_OVERHEAD_TOKENS for m in messages)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    estimated: bool

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Ledger(Protocol):
    """Reserves tokens before a call and settles them after; see DESIGN §6."""

    def reserve(self, *, role: Role, purpose: str, tokens: int) -> int:
        """Reserve `tokens` or raise BudgetExceeded; returns a reservation id."""
        ...

    def settle(
        self, reservation: int, *, usage: Usage | None, status: str, latency_ms: int
    ) -> None:
        """Replace the reservation by the usage (the whole reservation when usage is None)."""
        ...


@dataclass
class NullLedger:
    """An in-memory ledger with an optional budget, for pure code and tests without a database."""

    budget: int | None = None
    used: int = 0
    reserved: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    _open: dict[int, tuple[Role, str, int]] = field(default_factory=dict)

    def reserve(self, *, role: Role, purpose: str, tokens: int) -> int:
        if self.budget is not None and self.used + self.reserved + tokens > self.budget:
            raise BudgetExceeded(f"{role}/{purpose} needs {tokens} tokens")
        self.reserved += tokens
        rid = len(self.calls) + len(self._open) + 1
        self._open[rid] = (role, purpose, tokens)
        return rid

    def settle(
        self, reservation: int, *, usage: Usage | None, status: str, latency_ms: int
    ) -> None:
        role, purpose, tokens = self._open.pop(reservation)
        actual = tokens if usage is None else min(usage.total_tokens, tokens)
        self.reserved -= tokens
        self.used += actual
        self.calls.append({"role": role, "purpose": purpose, "tokens": actual, "status": status})

    def used_by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for call in self.calls:
            out[call["role"]] = out.get(call["role"], 0) + call["tokens"]
        return out


class Engine(Protocol):
    """One way of doing a role's LLM work. Every call is metered through the engine's ledger."""

    name: str

    def run(
        self,
        *,
        role: Role,
        purpose: str,
        messages: list[Message],
        max_tokens: int,
        offline: Callable[[], T],
    ) -> T:
        """Do the work described by `messages`.

        The offline engine calls `offline()` (the role's deterministic implementation) and meters
        the prompt plus what it produced as estimated tokens. Other engines send `messages`.
        """
        ...
