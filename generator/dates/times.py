"""Reading clock times as people say them: `TimePhrase`, `find_times`, and the times that
propose a slot (`time_proposals`, `says_time`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.dates.days import HOURS_TALK, find_dates, sentence_around
from generator.dates.words import NUMBER_WORDS

_H = r"(1[0-2]|0?[1-9]|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
_AMPM = r"(a\.?m\.?|p\.?m\.?)"
_NOT_A_TIME_AFTER = (
    r"(?![:.]?\d)(?!\s*(?:-\s*\d|to\s+\d|min|mins|minutes?|hours?|hrs?|days?|weeks?|months?|"
    r"years?|eur|euro|euros|%|people|persons?|kids|children|teeth|of\b|st\b|nd\b|rd\b|th\b))"
)
_TIME_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("clock", re.compile(rf"\b([01]?\d|2[0-3])[:.]([0-5]\d)(?!\d)(?:\s*{_AMPM}(?!\w))?", re.I)),
    ("ampm", re.compile(rf"\b{_H}\s*{_AMPM}(?!\w)", re.I)),
    ("noon", re.compile(r"\b(noon|midday|lunchtime)\b", re.I)),
    ("half_past", re.compile(rf"\bhalf\s+past\s+{_H}\b", re.I)),
    ("quarter_past", re.compile(rf"\bquarter\s+past\s+{_H}\b", re.I)),
    ("quarter_to", re.compile(rf"\bquarter\s+to\s+{_H}\b", re.I)),
    ("half", re.compile(rf"\bhalf\s+{_H}\b(?!\s*(?:an?\s+)?(?:hour|day|price))", re.I)),
    ("oclock", re.compile(rf"\b{_H}\s*o['’]?\s?clock\b", re.I)),
    ("ish", re.compile(rf"\b{_H}\s*-?ish\b", re.I)),
    (
        "cued",
        re.compile(
            rf"\b(?:at|around|about|say|@)\s+(?:about\s+|around\s+|roughly\s+)?{_H}\b"
            rf"{_NOT_A_TIME_AFTER}",
            re.I,
        ),
    ),
)
_DAY_PART = re.compile(r"\b(morning|afternoon|evening|tonight|lunchtime)\b", re.I)


@dataclass(frozen=True)
class TimePhrase:
    """A clock time said in text: [start, end) in the text and its 24-hour value."""

    start: int
    end: int
    text: str
    value: str  # HH:MM


def _hour(raw: str) -> int:
    return NUMBER_WORDS.get(raw.casefold()) or int(raw)


def _day_hour(hour: int, ampm: str | None, part: str | None) -> int:
    """24-hour value of a 12-hour clock hour: am/pm first, then the day part, then the
    business default (1-7 afternoon, 8-11 morning, 12 noon)."""
    if ampm:
        return hour % 12 + (12 if ampm.casefold().startswith("p") else 0)
    if part in ("afternoon", "evening", "tonight"):
        return hour % 12 + 12
    if part == "morning":
        return hour % 12
    return hour + 12 if 1 <= hour <= 7 else hour


def _time_value(kind: str, m: re.Match[str], part: str | None) -> str | None:
    g = m.groups()
    if kind == "clock":
        hour, minute = int(g[0]), int(g[1])
        raw_hour = g[0]
        if g[2]:
            if not 1 <= hour <= 12:
                return None
            hour = _day_hour(hour, g[2], part)
        elif len(raw_hour) == 1 and 1 <= hour <= 7:
            hour = _day_hour(hour, None, part)  # "3:30" in a booking is the afternoon
        return f"{hour:02d}:{minute:02d}"
    if kind == "noon":
        return "12:00"
    hour = _hour(g[0])
    minute = 0
    ampm = g[1] if kind == "ampm" else None
    if kind in ("half_past", "half"):
        minute = 30
    elif kind == "quarter_past":
        minute = 15
    elif kind == "quarter_to":
        hour, minute = hour - 1 or 12, 45
    return f"{_day_hour(hour, ampm, part):02d}:{minute:02d}"


def find_times(text: str) -> list[TimePhrase]:
    """Every clock time in `text`, in order (dates are skipped, so 4.12.26 is not 04:12)."""
    taken = [(p.start, p.end) for p in find_dates(text) if p.rule in ("iso", "numeric")]
    found: list[TimePhrase] = []
    for kind, pattern in _TIME_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            part_match = _DAY_PART.search(sentence_around(text, m.start()))
            part = part_match.group(1).casefold() if part_match else None
            value = _time_value(kind, m, part)
            if value is None:
                continue
            taken.append((m.start(), m.end()))
            text, end = m.group(0), m.end()
            if re.search(r"\d\s*[ap]m\.$", text, re.IGNORECASE):
                text, end = text[:-1], end - 1  # "at 11am." ends the sentence
            found.append(TimePhrase(m.start(), end, text, value))
    return sorted(found, key=lambda p: p.start)


def time_proposals(text: str) -> list[TimePhrase]:
    """Clock times that propose a time: not those in a sentence about opening hours
    ("are you open until 6?")."""
    return [p for p in find_times(text) if not HOURS_TALK.search(sentence_around(text, p.start))]


def says_time(text: str, hhmm: str) -> TimePhrase | None:
    """The phrase of `text` that proposes the time `hhmm`, if any."""
    wanted = hhmm.strip()
    return next((p for p in time_proposals(text) if p.value == wanted), None)
