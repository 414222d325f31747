"""The customer simulator: plays a blueprint's persona against the responder, turn by turn.

Order of play: the planned messages, then the scripted reply flow; each message also answers
what the responder just asked for, when the persona holds that fact and has not said it yet
(from the persona's facts and nothing else). After the plan, the customer only answers
questions. It stops at the turn cap, or when the responder says `COMPLETE` and nothing planned
is left. A customer whose scenario expects the responder to keep waiting (a vague request)
does not know which service they want.
"""

from __future__ import annotations

import json
import random
import re
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


_VALUE_PATTERNS: dict[str, re.Pattern[str]] = {
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "time": re.compile(r"\b\d{1,2}:\d{2}\b"),
    "phone": re.compile(r"\+?\d[\d ()-]{6,}\d"),
    "email": re.compile(r"@"),
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
    sentences = re.split(r"(?<=[.!?])\s+", reply)
    questions = " ".join(s for s in sentences if s.rstrip().endswith("?")).casefold()
    if not questions:
        return []
    key_words = {key: key.replace("_", " ").casefold().split() for key in facts}
    asked = []
    for key in facts:
        kind = fact_kind(key)
        # A word that other keys share ("preferred" in preferred_date and preferred_time)
        # does not say which of them is asked for.
        shared = {w for other, ws in key_words.items() if other != key for w in ws}
        own = tuple(w for w in key_words[key] if w not in shared)
        hints = _KIND_WORDS.get(kind, ()) + own
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
    # Clean answers are sentences; casual ones are fragments, kept apart by commas
    # ("its Ann Lee, number is +353 ...", not "its Ann Lee number is ...").
    return " ".join(parts) if style == "clean" else ", ".join(parts)


def _answerable(blueprint: Blueprint, history: list[Turn], message: str) -> list[str]:
    """Persona facts the responder's last reply asks for that the customer has not given yet
    (nor gives in `message`). A customer who came without a clear need (the scenario expects
    the responder to keep waiting) does not know which service they want."""
    if not history:
        return []
    facts = blueprint.persona.facts
    keys = [
        k
        for k in asked_facts(history[-1].reply, facts)
        if not _already_said(facts[k], history) and facts[k].casefold() not in message.casefold()
    ]
    if blueprint.expected_status == "AWAITING_RESPONSE":
        keys = [k for k in keys if fact_kind(k) != "service"]
    # A message that already gives a value of that kind (even a wrong one the customer will
    # correct later) is not topped up with a second one.
    given = {kind for kind, pattern in _VALUE_PATTERNS.items() if pattern.search(message)}
    return [k for k in keys if fact_kind(k) not in given][:2]


def _next_text(blueprint: Blueprint, history: list[Turn]) -> str | None:
    """Planned message, else scripted reply, else nothing; plus answers to what was asked."""
    turn = len(history)
    planned, flow = blueprint.planned_messages, blueprint.reply_flow
    message = ""
    if turn < len(planned):
        message = planned[turn]
    elif turn - len(planned) < len(flow):
        message = flow[turn - len(planned)].reply
    elif history and history[-1].status == "COMPLETE":
        return None
    keys = _answerable(blueprint, history, message)
    if keys:
        rng = random.Random(derive_seed(0, "customer", blueprint.key, str(turn)))
        answer = _answer(keys, blueprint.persona.facts, blueprint.persona.style, rng)
        message = f"{message} {answer}".strip()
    return message or None


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
