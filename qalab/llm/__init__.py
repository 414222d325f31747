"""The lab's LLM layer: engines, token estimates and the budget ledger interface."""

from __future__ import annotations

from qalab.llm.base import (
    BudgetExceeded,
    Engine,
    Ledger,
    Message,
    NullLedger,
    Role,
    Usage,
    estimate_message_tokens,
    estimate_tokens,
)
from qalab.llm.offline import OfflineEngine

__all__ = [
    "BudgetExceeded",
    "Engine",
    "Ledger",
    "Message",
    "NullLedger",
    "OfflineEngine",
    "Role",
    "Usage",
    "estimate_message_tokens",
    "estimate_tokens",
    "get_engine",
]


def get_engine(name: str, *, ledger: Ledger) -> Engine:
    """The engine called `name`, metering every call through `ledger`."""
    if name == "offline":
        return OfflineEngine(ledger=ledger)
    raise ValueError(f"unknown LLM engine {name!r}; available: offline")
