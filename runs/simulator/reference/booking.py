"""Taking a booking: what to ask next (at most two fields at a time, never the same question
twice), a change of mind, and the request read back in the customer's own words."""

from __future__ import annotations

import re

from generator.dates import find_dates
from runs.simulator.contract import IntakeFieldRef, ResponderRequest
from runs.simulator.extraction import extract_spoken, field_kind
from runs.simulator.reference.questions import SENTENCES, SUGGEST

MAX_QUESTIONS = 2
_RELATIVE_DAY = re.compile(r"^(?:next|this|tomorrow|today|the day after|on)\b", re.IGNORECASE)


def field_label(field: IntakeFieldRef) -> str:
    label = re.sub(r"^(?:your|the)\s+", "", field.label.strip(), flags=re.IGNORECASE)
    return label[:1].lower() + label[1:]


def _ask(fields: list[IntakeFieldRef]) -> str:
    """One question sentence for the first (at most two) missing fields."""
    asked = fields[:MAX_QUESTIONS]
    service = next((f for f in asked if field_kind(f) == "service"), None)
    others = [field_label(f) for f in asked if f is not service]
    if service is None:
        return f"Could you tell me your {' and '.join(others)}?"
    label = field_label(service)
    if not others:
        return f"Which {label} would you like?"
    return f"Which {label} would you like, and could you tell me your {others[0]}?"


def _nudge(fields: list[IntakeFieldRef], services: list[str]) -> str:
    """A re-ask without the question: the options, and what is still needed."""
    needed = " and ".join(field_label(f) for f in fields[:MAX_QUESTIONS])
    if any(field_kind(f) == "service" for f in fields):
        options = f": {_listing(services, 'or')}" if services else ""
        return f"Just tell me the {needed} you'd like and I will note it{options}."
    return f"To pass on your request I still need your {needed}."


def _listing(names: list[str], last: str = "and") -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def suggest_services(services: list[str]) -> str:
    """For a customer who is not sure what they need: what we offer, and which fits."""
    if not services:
        return (
            "Could you tell me a little about what you need, so I can find the right appointment?"
        )
    return f"Which of these sounds closest to what you need: {_listing(services, 'or')}?"


def _asks_for(field: IntakeFieldRef, reply: str) -> bool:
    """Did `reply` ask for this field (its label in a question)?"""
    questions = [s for s in SENTENCES.findall(reply) if "?" in s]
    return any(field_label(field).casefold() in q.casefold() for q in questions)


def booking_question(
    request: ResponderRequest, extracted: dict[str, str], services: list[str], last: str
) -> str | None:
    """What to ask next for the booking (None when every required field is in), without
    asking the same question twice: a customer who is not sure which service they want is
    offered the services (at once when they ask for a suggestion, else once the other details
    are in) and asked for the rest meanwhile."""
    required = sorted(
        (f for f in request.intake_fields if f.required), key=lambda f: field_kind(f) != "service"
    )
    missing = [f for f in required if f.key not in extracted]
    if not missing:
        return None
    previous = [m.content for m in request.messages if m.role == "assistant"]
    service = next((f for f in missing if field_kind(f) == "service"), None)
    others = [f for f in missing if f is not service]
    asked_service = service is not None and any(_asks_for(service, m) for m in previous)
    if service is not None and SUGGEST.search(last):
        question = suggest_services(services)
    elif service is not None and asked_service and others:
        unsure = previous and _asks_for(service, previous[-1])
        lead = f"No problem if you're not sure which {field_label(service)} yet. " if unsure else ""
        question = lead + _ask(others)
    elif service is not None and asked_service:
        question = suggest_services(services)
    else:
        question = _ask(missing)
    if any(question in m for m in previous):
        # The same question again would get the same answer: say what is missing instead.
        question = _nudge(missing, services)
    return question


def _when(fields: list[IntakeFieldRef], spoken: dict[str, tuple[str, str]]) -> str:
    """The booking's service, day and time, the day and time in the customer's own words
    ("for Hygiene clean next Tuesday around 11")."""
    words = {field_kind(f): spoken[f.key] for f in fields if f.key in spoken}
    parts = []
    if "service" in words:
        parts.append(f"for {words['service'][0]}")
    if "date" in words:
        said = mid_sentence(words["date"][1])
        parts.append(said if _RELATIVE_DAY.match(said) else f"on {said}")
    if "time" in words:
        said = mid_sentence(words["time"][1])
        parts.append(said if re.match(r"(?:at|around|about)\b", said, re.I) else f"at {said}")
    return " ".join(parts)


def booking_summary(fields: list[IntakeFieldRef], spoken: dict[str, tuple[str, str]]) -> str:
    by_kind = {field_kind(f): spoken[f.key][0] for f in fields if f.key in spoken}
    who = f", {by_kind['name']}" if "name" in by_kind else ""
    what = _when(fields, spoken) or "with the details you gave"
    return (
        f"Thank you{who}. I have passed on your booking request {what}; "
        "the team will confirm it with you."
    )


def _same_day(a: str, b: str) -> bool:
    """Do two date values name the same day, one perhaps more fully ("the 28th" / "Saturday
    the 28th")?"""
    if a.casefold() == b.casefold():
        return True
    pa, pb = find_dates(a), find_dates(b)
    if not (pa and pb) or pa[0].day is None or pa[0].day != pb[0].day:
        return False
    x, y = pa[0], pb[0]
    months = x.month is None or y.month is None or x.month == y.month
    weekdays = x.weekday is None or y.weekday is None or x.weekday == y.weekday
    return months and weekdays


def changed_fields(
    fields: list[IntakeFieldRef], customer: list[str], services: list[str]
) -> list[tuple[IntakeFieldRef, str]]:
    """Fields whose value the last message changes (a correction or a change of mind), with
    the customer's words for the new value."""
    if len(customer) < 2:
        return []
    before = extract_spoken(fields, customer[:-1], services)
    now = extract_spoken(fields, customer[-1:], services)
    changed = []
    for f in fields:
        if f.key not in now or f.key not in before:
            continue
        new, old = now[f.key][0], before[f.key][0]
        same = _same_day(new, old) if field_kind(f) == "date" else new == old
        if not same:
            changed.append((f, now[f.key][1]))
    return changed


def noted_reply(fields: list[IntakeFieldRef], customer: list[str], services: list[str]) -> str:
    """ "Thanks, next Tuesday around 11 is noted.": the day and time the last message gives,
    read back in the customer's words while the booking still lacks something."""
    now = extract_spoken(fields, customer[-1:], services)
    words = [now[f.key][1] for f in fields if f.key in now and field_kind(f) == "date"]
    words += [
        w if re.match(r"(?:at|around|about)\b", w, re.I) else f"at {w}"
        for w in (now[f.key][1] for f in fields if f.key in now and field_kind(f) == "time")
    ]
    if not words:
        return ""
    said = re.sub(r"^on\s+", "", mid_sentence(" ".join(words)), flags=re.IGNORECASE)
    return f"Thanks, {said} is noted."


_SENTENCE_OPENER = re.compile(r"^(?:Next|This|The|On|Tomorrow|Today|At|Around|About)\b")


def mid_sentence(words: str) -> str:
    """The customer's words for a day or time, read back inside a sentence ("Next Tuesday"
    at the start of their message is "next Tuesday" in ours)."""
    return _SENTENCE_OPENER.sub(lambda m: m.group(0).lower(), words.strip())
