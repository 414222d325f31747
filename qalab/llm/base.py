"""Engine and ledger interfaces shared by every role that spends tokens."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

Role = Literal["generator", "simulator", "judge", "responder"]
ROLES: tuple[Role, ...] = ("generator", "simulator", "judge", "responder")
Message = dict[str, str]
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# Chat formats add a few tokens of framing per message (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 4


class BudgetExceeded(Exception):
    """A reservation was denied: the run's token budget cannot cover the next call."""


class RunEnded(BudgetExceeded):
    """A reservation was refused because its run has ended (cancelled, errored): an ended run
    spends nothing more. A `BudgetExceeded`, so every caller stops making calls the same way."""


class LlmError(Exception):
    """The LLM endpoint could not do the work (after retries); the message says why."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code  # the endpoint's HTTP status, when it answered one


class QuotaExhausted(LlmError):
    """HTTP 429 `insufficient_quota`: the account is out of credit. Retrying cannot help."""


class StructuredOutputError(LlmError):
    """The model's reply did not validate against the role's schema, even after one repair."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


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


@dataclass(frozen=True)
class ChatReply:
    """Free text a model wrote (no schema), what it cost (zero when replayed) and why it
    stopped (`stop`, or `length` when it hit `max_tokens`)."""

    text: str
    usage: Usage
    finish_reason: str = "stop"


class Ledger(Protocol):
    """Reserves tokens before a call and settles them after; see DESIGN §6.

    Every attempt is one row: reserve -> settle. Calls that spend nothing (a replayed reply, a
    fallback to the offline implementation) are recorded with `record`.
    """

    def reserve(self, *, role: Role, purpose: str, tokens: int, attempt: int = 1) -> int:
        """Reserve `tokens` or raise BudgetExceeded; returns a reservation id."""
        ...

    def settle(
        self,
        reservation: int,
        *,
        usage: Usage | None,
        status: str,
        latency_ms: int,
        raw: str = "",
        detail: str = "",
    ) -> None:
        """Replace the reservation by the usage (the whole reservation when usage is None).

        `raw` is the model's reply as received (stored before validation); `detail` an error.
        """
        ...

    def record(
        self, *, role: Role, purpose: str, status: str, raw: str = "", detail: str = ""
    ) -> None:
        """A row that spends no tokens (status `replayed` or `fallback`)."""
        ...


@dataclass
class NullLedger:
    """An in-memory ledger with an optional budget, for pure code and tests without a database."""

    budget: int | None = None
    used: int = 0
    reserved: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    _open: dict[int, tuple[Role, str, int]] = field(default_factory=dict)

    def reserve(self, *, role: Role, purpose: str, tokens: int, attempt: int = 1) -> int:
        if self.budget is not None and self.used + self.reserved + tokens > self.budget:
            raise BudgetExceeded(f"{role}/{purpose} needs {tokens} tokens")
        self.reserved += tokens
        rid = len(self.calls) + len(self._open) + 1
        self._open[rid] = (role, purpose, tokens)
        return rid

    def settle(
        self,
        reservation: int,
        *,
        usage: Usage | None,
        status: str,
        latency_ms: int,
        raw: str = "",
        detail: str = "",
    ) -> None:
        role, purpose, tokens = self._open.pop(reservation)
        actual = tokens if usage is None else min(usage.total_tokens, tokens)
        self.reserved -= tokens
        self.used += actual
        self.calls.append(
            {"role": role, "purpose": purpose, "tokens": actual, "status": status, "raw": raw}
        )

    def record(
        self, *, role: Role, purpose: str, status: str, raw: str = "", detail: str = ""
    ) -> None:
        self.calls.append(
            {"role": role, "purpose": purpose, "tokens": 0, "status": status, "raw": raw}
        )

    def used_by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for call in self.calls:
            out[call["role"]] = out.get(call["role"], 0) + call["tokens"]
        return out


class Engine(Protocol):
    """One way of doing a role's LLM work. Every call is metered through the engine's ledger."""

    name: str
    # Part of every recorded request's identity when set: a run's later trials of a scenario
    # send the requests its first trial sent, and must each record (and replay) their own reply.
    replay_variant: str

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
        """Do the work described by `messages`; the result is an instance of `output`.

        The offline engine calls `offline()` (the role's deterministic implementation) and meters
        the prompt plus what it produced as estimated tokens. Other engines send `messages` with
        `output`'s JSON schema, validate the reply (and run `check`, which raises ValueError for
        a reply that fits the schema but not the task), and fall back to `offline()` (recorded in
        the ledger as `fallback`) when the reply stays invalid after one repair turn.
        """
        ...

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
        """Free text for `messages`, for a bot under test that writes prose (no schema, no
        validation, no repair turn): metered, budgeted, retried and replayed like `run`.

        `model` overrides the role's model. The offline engine returns `offline()` and meters
        the prompt plus that text as estimated tokens.
        """
        ...
