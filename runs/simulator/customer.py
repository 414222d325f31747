"""The customer simulator: plays a blueprint's persona against the responder, turn by turn.

Order of play: the planned messages, then the scripted reply flow, then (for a customer who
came to get something done) short answers to what the responder asked, taken from the
persona's facts and nothing else. The customer stops at the turn cap, or when the responder
says `COMPLETE` and the customer has nothing planned left to say. A customer whose scenario
expects the responder to keep waiting (vague or unsafe requests) does not volunteer facts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from pydantic import BaseModel

from generator.personas import misspell
from generator.rng import derive_seed
from generator.schemas import Blueprint, WritingStyle
from judge.schemas import Turn
from qalab.llm import Engine
from qalab.llm.base import Message
from qalab.llm.prompts import fence, load_prompt

MAX_TOKENS = 120
PROMPT = load_prompt(Path(__file__).resolve().parent / "prompts", "customer")

# (clean, casual) phrasings of an answer; the typo-heavy customer garbles the casual one.
_ANSWERS: dict[str, tuple[str, str]] = {
    "name": ("My name is {v}.", "its {v}"),
    "phone": ("My phone number is {v}.", "number is {v}"),
    "email": ("My email address is {v}.", "email is {v}"),
    "date": ("{v} would suit me.", "{v} works for me"),
    "time": ("{v} would be best.", "{v} if poss"),
    "service": ("It is for {v}.", "its for {v}"),
    "other": ("{label}: {v}.", "{lower_label} - {v}"),
}
# Words that show which fact a question asks for.
_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "name": ("name",),
    "phone": ("phone", "number", "mobile"),
    "email": ("email", "e-mail"),
    "date": ("date", "day", "when"),
    "time": ("time",),
    "service": ("service", "treatment", "repair", "which", "what kind"),
}


def fact_kind(key: str) -> str:
    text = key.replace("_", " ").casefold()
    for kind, hints in (
        ("email", ("email",)),
        ("phone", ("phone", "mobile", "number")),
        ("date", ("date", "day")),
        ("time", ("time",)),
        ("name", ("name",)),
        ("service", ("service", "treatment", "repair")),
    ):
        if any(h in text for h in hints):
            return kind
    return "other"


def asked_facts(reply: str, facts: dict[str, str]) -> list[str]:
    """Keys of persona facts that the reply's questions ask for, in persona order."""
    questions = " ".join(s for s in reply.replace("?", "?\n").splitlines() if "?" in s).casefold()
    if not questions:
        return []
    asked = []
    for key in facts:
        kind = fact_kind(key)
        hints = _KIND_WORDS.get(kind, ()) + tuple(key.replace("_", " ").casefold().split())
        if any(h in questions for h in hints if len(h) > 2):
            asked.append(key)
    return asked


def _already_said(value: str, history: list[Turn]) -> bool:
    return any(value.casefold() in t.customer.casefold() for t in history)


def _answer(keys: list[str], facts: dict[str, str], style: WritingStyle, rng: random.Random) -> str:
    parts = []
    for key in keys:
        clean, casual = _ANSWERS[fact_kind(key)]
        template = clean if style == "clean" else casual
        if style == "typo_heavy":
            template = misspell(template, rng)
        label = key.replace("_", " ")
        parts.append(
            template.format(v=facts[key], label=label.capitalize(), lower_label=label.lower())
        )
    return " ".join(parts)


def _next_text(blueprint: Blueprint, history: list[Turn]) -> str | None:
    turn = len(history)
    planned, flow = blueprint.planned_messages, blueprint.reply_flow
    if turn < len(planned):
        return planned[turn]
    if turn - len(planned) < len(flow):
        return flow[turn - len(planned)].reply
    last = history[-1] if history else None
    if last is None or last.status == "COMPLETE":
        return None
    if blueprint.expected_status == "AWAITING_RESPONSE":
        return None
    facts = blueprint.persona.facts
    keys = [k for k in asked_facts(last.reply, facts) if not _already_said(facts[k], history)]
    if not keys:
        return None
    rng = random.Random(derive_seed(0, "customer", blueprint.key, str(turn)))
    return _answer(keys[:2], facts, blueprint.persona.style, rng)


def _prompt(blueprint: Blueprint, history: list[Turn]) -> list[Message]:
    persona = blueprint.persona
    system = PROMPT.render(
        name=persona.name,
        locale=persona.locale,
        style=persona.style.replace("_", "-"),
        goal=blueprint.goal,
        planned=json.dumps(blueprint.planned_messages, ensure_ascii=False),
        facts="; ".join(f"{k}={v}" for k, v in persona.facts.items()),
        last_reply=fence(history[-1].reply, "assistant") if history else "(no message yet)",
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"You have sent {len(history)} message(s). Your next one?"},
    ]


def customer_next_message(
    blueprint: Blueprint, history: list[Turn], *, engine: Engine, purpose: str
) -> str | None:
    """The customer's next message, or None when the conversation is over."""
    if len(history) >= blueprint.max_turns:
        return None
    text = _next_text(blueprint, history)
    if text is None:
        return None
    move = engine.run(
        role="simulator",
        purpose=purpose,
        messages=_prompt(blueprint, history),
        max_tokens=MAX_TOKENS,
        output=CustomerMove,
        offline=lambda: CustomerMove(message=text),
    )
    return move.message.strip() or None


class CustomerMove(BaseModel):
    """The customer's next message; an empty message ends the conversation."""

    message: str
