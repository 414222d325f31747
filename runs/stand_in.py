"""An `openai-chat:` bot on the offline engine: no model is called, the lab's reference bot
answers in its place (`runs.simulator.openai_chat`). Such a run tests the lab, not the bot, so
it is refused at creation unless asked for (QALAB_OPENAI_CHAT_STAND_IN), and then it is one of
the lab's own runs (`Run.probe` "stand-in") whose every report says the bot was not called."""

from __future__ import annotations

from django.conf import settings

from runs.simulator.openai_chat import is_openai_chat


def stand_in_needed(spec: str, engine: str) -> bool:
    """Whether a run of responder `spec` on `engine` would have the reference bot stand in."""
    return engine == "offline" and is_openai_chat(spec.strip())


def stand_in_refusal(spec: str, engine: str) -> str | None:
    """Why a run of `spec` on `engine` is refused (None: it is not, or the stand-in is asked for)."""
    if not stand_in_needed(spec, engine) or settings.QALAB_OPENAI_CHAT_STAND_IN:
        return None
    return (
        f"responder {spec.strip()!r} would not be called: QALAB_LLM_ENGINE is offline, so the "
        "lab's reference bot would stand in for the model and the verdict would not be the "
        "bot's. Set QALAB_LLM_ENGINE=openai (with QALAB_LLM_BASE_URL and QALAB_LLM_API_KEY) to "
        "test it, or QALAB_OPENAI_CHAT_STAND_IN=1 to run the stand-in on purpose (a run of the "
        "lab's own, marked 'the bot was not called')"
    )
