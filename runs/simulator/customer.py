"""The customer simulator: plays a blueprint's persona against the responder, turn by turn.

Order of play: the planned messages, then the scripted reply flow; each message also answers
what the responder just asked for, when the persona holds that fact and has not said it yet
(from the persona's facts and nothing else). After the plan, the customer only answers
questions. It stops at the turn cap, or when the responder says `COMPLETE` and nothing planned
is left. A customer whose scenario expects the responder to keep waiting (a vague request)
does not know which service they want.

Answers are worded like the planned messages (generator/speech.py): by persona style and
manner, with dates and times as people say them ("next Tuesday", "half nine"), meaning the
persona's exact facts on the blueprint's reference day. A fact counts as said when the customer
said it in any words (`states`).
"""

from __future__ import annotations

import json
import random
import re
from datetime import date
from pathlib import Path

from pydantic import BaseModel

from generator.dates import find_times, proposals, says_date, says_time
from generator.rng import derive_seed
from generator.schemas import Blueprint
from generator.speech import Speaker, with_article
from judge.schemas import Turn
from qalab.llm import Engine
from qalab.llm.base import Message
from qalab.llm.prompts import fence, load_prompt

MAX_TOKENS = 100
PROMPT = load_prompt(Path(__file__).resolve().parent / "prompts", "customer")

# Words that show which fact a question asks for.
_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "name": ("name",),
    "phone": ("phone", "number", "mobile"),
    "email": ("email", "e-mail"),
    "date": ("date", "day", "when"),
    "time": ("time",),
    "service": ("service", "treatment", "repair", "which", "what kind"),
}
_PHONE = re.compile(r"\+?\d[\d ()-]{6,}\d")
_NOT_PHONE = re.compile(r"[^\d\s()+./-]")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_HHMM = re.compile(r"\d{2}:\d{2}")


def fact_kind(key: str, value: str | None = None, name: str | None = None) -> str:
    """The kind of a persona fact, read off its key; with its `value` (and the persona's
    `name`), checked against what it holds: a `frame_number` holding "WTU12345C67" is no phone
    number, a `pet_name` holding "Bella" is not the customer's name, a `datum` holding
    2026-03-10 is a date (the generator writes dates and times in these forms only)."""
    text = key.replace("_", " ").casefold()
    kind = "other"
    for candidate, hints in (
        ("email", ("email",)),
        ("phone", ("phone", "mobile", "number")),
        ("date", ("date", "day")),
        ("time", ("time",)),
        ("name", ("name",)),
        ("service", ("service", "treatment", "repair")),
    ):
        if any(h in text for h in hints):
            kind = candidate
            break
    if value is None:
        return kind
    value = value.strip()
    if _ISO_DATE.fullmatch(value) or _HHMM.fullmatch(value):
        return "date" if "-" in value else "time"
    mismatch = {
        "date": True,
        "time": True,
        "email": "@" not in value,
        "phone": bool(_NOT_PHONE.search(value)) or sum(c.isdigit() for c in value) < 7,
        "name": name is not None and value != name,
    }
    return "other" if mismatch.get(kind, False) else kind


def _kinds(blueprint: Blueprint) -> dict[str, str]:
    """Every persona fact's kind, checked against its value (`fact_kind`)."""
    persona = blueprint.persona
    return {k: fact_kind(k, v, persona.name) for k, v in persona.facts.items()}


def asked_facts(reply: str, facts: dict[str, str]) -> list[str]:
    """Keys of persona facts that the reply's questions ask for, in persona order."""
    sentences = re.split(r"(?<=[.!?])\s+", reply)
    questions = " ".join(s for s in sentences if s.rstrip().endswith("?")).casefold()
    if not questions:
        return []
    key_words = {key: key.replace("_", " ").casefold().split() for key in facts}
    # A key asked for by name ("frame number") is asked for, and its words say nothing of the
    # other facts ("number" there does not ask for the phone).
    named = {k for k, ws in key_words.items() if len(ws) > 1 and " ".join(ws) in questions}
    rest = questions
    for key in named:
        rest = rest.replace(" ".join(key_words[key]), " ")
    asked = []
    for key in facts:
        kind = fact_kind(key, facts[key])
        # A word that other keys share ("preferred" in preferred_date and preferred_time)
        # does not say which of them is asked for.
        shared = {w for other, ws in key_words.items() if other != key for w in ws}
        own = tuple(w for w in key_words[key] if w not in shared)
        hints = _KIND_WORDS.get(kind, ()) + own
        if key in named or any(h in rest for h in hints if len(h) > 2):
            asked.append(key)
    return asked


def states(kind: str, value: str, text: str, today: date | None) -> bool:
    """Does `text` say the fact `value` of this kind, in any words ("next Tuesday" says the
    date it means on `today`, "half nine" says 09:30)?"""
    if kind == "date" and says_date(text, value, today) is not None:
        return True
    if kind == "time" and says_time(text, value) is not None:
        return True
    return value.casefold() in text.casefold()


def _already_said(kind: str, value: str, history: list[Turn], today: date | None) -> bool:
    return any(states(kind, value, t.customer, today) for t in history)


def _given_kinds(message: str) -> set[str]:
    """Kinds of value a message already gives (even a wrong one the customer will correct)."""
    kinds = set()
    if proposals(message):
        kinds.add("date")
    if find_times(message):
        kinds.add("time")
    if "@" in message:
        kinds.add("email")
    without_email = re.sub(r"\S*@\S*", " ", message)
    if any(sum(c.isdigit() for c in m.group(0)) >= 7 for m in _PHONE.finditer(without_email)):
        kinds.add("phone")
    return kinds


_QUESTION_WORD = re.compile(
    r"^\W*(?:and\s+|so\s+)?(?:what|how|when|where|which|who|why|can|could|do|does|is|are|"
    r"will|would|r u|u)\b",
    re.IGNORECASE,
)


def _attach(message: str, answer: str, casual: bool) -> str:
    """`answer` after the planned `message`, punctuated so they read as two thoughts
    ("dunno yet, what would u suggest? number is ...")."""
    message = message.rstrip()
    if not message:
        return answer
    if message[-1] not in ".!?":
        last_clause = re.split(r",\s*", message)[-1]
        message += "?" if _QUESTION_WORD.match(last_clause) else ("," if casual else ".")
    return f"{message} {answer}"


def _answer(keys: list[str], blueprint: Blueprint, rng: random.Random, plain: bool = False) -> str:
    """The customer's words for the facts `keys`, by persona style and manner; a date and a
    time asked together are said together ("next Tuesday, around 11 if possible"). `plain`
    answers without the manner's lead-ins (after a message of their own)."""
    persona = blueprint.persona
    speaker = Speaker(persona, rng, blueprint.reference_date)
    facts = persona.facts
    kind_of = _kinds(blueprint)
    kinds = {kind_of[k]: k for k in keys}
    parts = []
    details = []  # free-text answers: whole sentences, said last
    if "date" in kinds and "time" in kinds:
        parts.append(speaker.slot(facts[kinds["date"]], facts[kinds["time"]]))
    for key in keys:
        kind = kind_of[key]
        value = facts[key]
        if kind in ("date", "time") and "date" in kinds and "time" in kinds:
            continue
        if kind == "date":
            parts.append(speaker.say("date", **speaker.date_words(value)))
        elif kind == "time":
            parts.append(speaker.say("time", **speaker.time_words(value)))
        elif kind == "service":
            parts.append(speaker.say("service", v=value, a_v=with_article(value)))
        elif kind in ("name", "phone", "email"):
            lead_in = persona.manner in ("chatty", "hesitant")
            parts.append(speaker.say(kind, v=value, plain=plain or lead_in))
        else:
            label = key.replace("_", " ")
            details.append(
                speaker.say("other", v=value, label=label.capitalize(), lower_label=label.lower())
            )
    return speaker.join(parts, then=details)


def _answerable(blueprint: Blueprint, history: list[Turn], message: str) -> list[str]:
    """Persona facts the responder's last reply asks for that the customer has not given yet
    (nor gives in `message`). A customer who came without a clear need (the scenario expects
    the responder to keep waiting) does not know which service they want. A hesitant customer
    answers one thing at a time while there is room, and does not top up a planned message
    that already answers something; a chatty one gives the time along with the date."""
    if not history:
        return []
    facts = blueprint.persona.facts
    today = blueprint.reference_date
    kind = _kinds(blueprint)
    asked = asked_facts(history[-1].reply, facts)
    keys = [
        k
        for k in asked
        if not _already_said(kind[k], facts[k], history, today)
        and not states(kind[k], facts[k], message, today)
    ]
    if blueprint.expected_status == "AWAITING_RESPONSE":
        keys = [k for k in keys if kind[k] != "service"]
    given = _given_kinds(message)
    keys = [k for k in keys if kind[k] not in given][:2]
    manner = blueprint.persona.manner
    if manner == "hesitant":
        answered = [k for k in asked if states(kind[k], facts[k], message, today)]
        turns_left = blueprint.max_turns - len(history) - 1
        if message and answered:
            return []
        if len(keys) > 1 and turns_left >= 2:
            keys = keys[:1]
    if manner == "chatty" and any(kind[k] == "date" for k in keys):
        extra = [
            k
            for k in facts
            if kind[k] == "time"
            and k not in keys
            and not _already_said("time", facts[k], history, today)
            and "time" not in given
        ]
        keys += extra[:1]
    return keys


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
        answer = _answer(keys, blueprint, rng, plain=bool(message))
        message = _attach(message, answer, blueprint.persona.style != "clean")
    return message or None


def _prompt(blueprint: Blueprint, history: list[Turn]) -> list[Message]:
    persona = blueprint.persona
    system = PROMPT.render(
        name=persona.name,
        locale=persona.locale,
        style=f"{persona.style.replace('_', '-')} {persona.manner}",
        goal=blueprint.goal,
        # Only what is left to say: the messages already sent need no repeating.
        planned=json.dumps(blueprint.planned_messages[len(history) :], ensure_ascii=False),
        facts="; ".join(f"{k}={v}" for k, v in persona.facts.items()) + _speaking(blueprint),
        last_reply=fence(history[-1].reply, "assistant") if history else "(no message yet)",
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"You have sent {len(history)} message(s). Your next one?"},
    ]


def _speaking(blueprint: Blueprint) -> str:
    """How a model playing the customer should word those facts: as people do, relative to
    the day the conversation takes place (the blueprint's reference day). Kept short: it is
    sent with every simulator call."""
    if blueprint.persona.manner == "precise":
        return "; write dates YYYY-MM-DD"
    today = blueprint.reference_date
    when = f"today is {today:%a %d %b %Y}; " if today else ""
    return f"; {when}say dates as people do ('next Tue', 'the 4th'), never YYYY-MM-DD"


def customer_next_message(
    blueprint: Blueprint, history: list[Turn], *, engine: Engine, purpose: str
) -> str | None:
    """The customer's next message, or None when the conversation is over."""
    if len(history) >= blueprint.max_turns:
        return None
    text = _next_text(blueprint, history)
    if text is None:
        return None
    turn = len(history)
    if turn < len(blueprint.planned_messages) and text == blueprint.planned_messages[turn]:
        # A planned message with nothing to answer is sent as the generator's model wrote it
        # for this persona: asking the simulator to restate it would cost a call (issue 19).
        return text.strip() or None
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
