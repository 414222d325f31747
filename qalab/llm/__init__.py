"""The lab's LLM layer: engines, token estimates and the budget ledger interface."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from qalab.llm.base import (
    BudgetExceeded,
    ChatReply,
    Engine,
    Ledger,
    LlmError,
    Message,
    NullLedger,
    QuotaExhausted,
    Role,
    RunEnded,
    StructuredOutputError,
    Usage,
    estimate_message_tokens,
    estimate_tokens,
)
from qalab.llm.offline import OfflineEngine

if TYPE_CHECKING:
    from qalab.llm.openai_engine import OpenAIEngine

__all__ = [
    "BudgetExceeded",
    "ChatReply",
    "Engine",
    "Ledger",
    "LlmError",
    "Message",
    "NullLedger",
    "OfflineEngine",
    "OpenAIEngine",
    "QuotaExhausted",
    "Role",
    "RunEnded",
    "StructuredOutputError",
    "Usage",
    "estimate_message_tokens",
    "estimate_tokens",
    "get_engine",
]


ENGINES = ("offline", "openai")


def __getattr__(name: str) -> Any:
    # The openai engine imports the SDK: only load it when someone asks for it.
    if name == "OpenAIEngine":
        from qalab.llm.openai_engine import OpenAIEngine

        return OpenAIEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_engine(name: str, *, ledger: Ledger) -> Engine:
    """The engine called `name`, metering every call through `ledger`."""
    if name == "offline":
        return OfflineEngine(ledger=ledger)
    if name == "openai":
        return openai_engine_from_settings(ledger=ledger)
    raise ValueError(f"unknown LLM engine {name!r}; available: {', '.join(ENGINES)}")


def openai_engine_from_settings(*, ledger: Ledger) -> OpenAIEngine:
    """An OpenAIEngine configured by the QALAB_LLM_* and QALAB_*_MODEL settings."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from qalab.llm.openai_engine import OpenAIEngine

    api_key = getattr(settings, "QALAB_LLM_API_KEY", "")
    if not api_key:
        raise ImproperlyConfigured(
            "QALAB_LLM_ENGINE=openai needs an API key: set QALAB_LLM_API_KEY (or OPENAI_API_KEY);"
            " any non-empty value works for local servers that ignore it"
        )
    models = {
        "generator": settings.QALAB_GENERATOR_MODEL,
        "simulator": settings.QALAB_SIMULATOR_MODEL,
        "judge": settings.QALAB_JUDGE_MODEL,
        "responder": settings.QALAB_RESPONDER_MODEL,
    }
    replay_dir = getattr(settings, "QALAB_LLM_REPLAY_DIR", "")
    base_url = getattr(settings, "QALAB_LLM_BASE_URL", "") or None
    mode = getattr(settings, "QALAB_LLM_JSON_MODE", "json_schema")
    system_role = getattr(settings, "QALAB_LLM_SYSTEM_ROLE", "system")
    endpoint = base_url or ""
    engine = OpenAIEngine(
        ledger=ledger,
        models=models,
        base_url=base_url,
        api_key=api_key,
        json_mode=_PROBED.get(base_url or "", "json_schema") if mode == "auto" else mode,
        timeout=float(getattr(settings, "QALAB_LLM_TIMEOUT_SECONDS", 60)),
        max_retries=int(getattr(settings, "QALAB_LLM_MAX_RETRIES", 4)),
        system_role=(
            _PROBED_ROLES.get(endpoint, "system") if system_role == "auto" else system_role
        ),
        replay_dir=Path(replay_dir) if replay_dir else None,
    )
    if mode == "auto" and (base_url or "") not in _PROBED:
        # One metered probe per endpoint and process: json_schema, or json_object after a 400.
        engine.json_mode = _PROBED[base_url or ""] = engine.probe_json_mode()
    if system_role == "auto" and endpoint not in _PROBED_ROLES:
        # One metered probe per endpoint and process, in the JSON mode chosen above: does the
        # model see system messages (`system`), or does the chat template drop them (`merge`)?
        engine.system_role = _PROBED_ROLES[endpoint] = engine.probe_system_role()
    return engine


_PROBED: dict[str, str] = {}  # endpoint -> the JSON mode `auto` picked
_PROBED_ROLES: dict[str, str] = {}  # endpoint -> the system role `auto` picked
