"""Dates and times as people say them: how a simulated customer phrases them, and the one
parser that reads them back (used by the simulator, the reference responder and the judge).

**Reference day.** A relative phrase ("next Tuesday", "tomorrow") means one calendar day only
relative to the day it is said. Every blueprint carries that day as `reference_date` (the run's
creation date, see `generator.pipeline.generate_artifacts`): the conversation is imagined to
take place on it. The customer says only phrases that this parser resolves, against that day,
to exactly the persona's canonical fact (ISO date, 24-hour HH:MM); the judge resolves what the
customer said and what the responder extracted against the same day. Without a reference day
(blueprints written before it existed) customers name the month ("the 4th of December").

**Dates** (``resolve(today)``):

- ``2026-12-04``, ``4/12/2026``, ``4.12.26``; ``4 December``, ``the 4th of December``,
  ``December 4th``, ``Friday 4 December`` (a year-less date is the first such day from today);
- ``today``, ``tomorrow``, ``the day after tomorrow``;
- ``Friday``, ``on Friday``, ``this Friday``, ``this coming Friday``: the first Friday after
  today (1 to 7 days ahead);
- ``next Friday``, ``Friday next week``, ``next week, say Friday``: the Friday of the calendar
  week (Monday to Sunday) after today's. Customers say ``next Friday`` only when that is also
  the first Friday after today, so both common readings agree;
- ``the 12th``, ``Friday the 12th``: the first day after today with that day of the month
  (and weekday).

A weekday in a sentence about opening hours ("are you open on Tuesday?") is not a proposed
date (`proposals`).

**Times** (``HH:MM``): ``11:00``, ``10.30``, ``3pm``, ``11 o'clock``, ``11ish``, ``noon``,
``half nine`` (09:30, as said in Ireland and Britain), ``half past 2``, ``quarter past 3``,
``quarter to 4``, and a bare hour after ``at``/``around``/``about``/``say``/``for``. A bare
hour (no am/pm) from 1 to 7 is in the afternoon (13:00-19:00), 8 to 11 in the morning and 12 is
noon, unless the sentence says "morning", "afternoon" or "evening".
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date, timedelta

from generator.schemas import Manner

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTHS: dict[str, int] = {}
for _number, _name in enumerate(MONTH_NAMES, start=1):
    _MONTHS[_name.casefold()] = _number
    _MONTHS[_name[:3].casefold()] = _number
_MONTHS["sept"] = 9
_WEEKDAYS = {name.casefold(): i for i, name in enumerate(WEEKDAY_NAMES)}

_WD = "(" + "|".join(n.casefold() for n in WEEKDAY_NAMES) + ")"
_MON = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?:st|nd|rd|th)"
# Ordered: the first pattern to claim a span keeps it.
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")),
    ("numeric", re.compile(r"\b(\d{1,2})[./-](\d{1,2})(?:[./-](\d{2,4}))?\b")),
    (
        "day_month",
        re.compile(
            rf"\b(?:{_WD},?\s+)?(?:the\s+)?(\d{{1,2}}){_ORD}?\s+(?:of\s+)?{_MON}(?:,?\s+(\d{{4}}))?",
            re.IGNORECASE,
        ),
    ),
    (
        "month_day",
        re.compile(
            rf"\b(?:{_WD},?\s+)?{_MON}\s+(?:the\s+)?(\d{{1,2}}){_ORD}?\b(?:,?\s+(\d{{4}}))?",
            re.IGNORECASE,
        ),
    ),
    ("relative", re.compile(r"\b(?:the\s+)?(day after tomorrow|tomorrow|today)\b", re.I)),
    (
        "next_week_weekday",
        re.compile(
            rf"\bnext week\b[,;:]?\s+(?:on|say|maybe|ideally|perhaps|probably)\s+(?:the\s+)?"
            rf"{_WD}\b",
            re.IGNORECASE,
        ),
    ),
    (
        "weekday_dom",
        re.compile(rf"\b{_WD}\s+(?:the\s+(\d{{1,2}}){_ORD}?|(\d{{1,2}}){_ORD})\b", re.I),
    ),
    (
        "weekday",
        re.compile(
            rf"\b(?:(this coming|this|coming|next|on)\s+)?{_WD}\b(?:\s+(next week|this week))?",
            re.IGNORECASE,
        ),
    ),
    ("dom", re.compile(rf"\bthe\s+(\d{{1,2}}){_ORD}\b(?!\s+(?:of\s+)?{_MON})", re.I)),
)
_HOURS_TALK = re.compile(
    r"\b(?:open|opens|opening|close|closes|closing|closed|hours|until|till|what time)\b", re.I
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


@dataclass(frozen=True)
class DatePhrase:
    """A date said in text: [start, end) in the text, and the rule that gives its day."""

    start: int
    end: int
    text: str
    rule: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    weekday: int | None = None
    offset: int | None = None  # days after today, for today/tomorrow

    @property
    def absolute(self) -> bool:
        """True when the phrase names its month (it needs no reference day)."""
        return self.rule in ("iso", "numeric", "day_month", "month_day")

    def readings(self) -> frozenset[tuple[int | None, int, int]]:
        """(year or None, month, day) it may mean without a reference day; d/m is also m/d."""
        if not self.absolute or self.month is None or self.day is None:
            return frozenset()
        found = {(self.year, self.month, self.day)}
        if self.rule == "numeric":
            found.add((self.year, self.day, self.month))
        return frozenset(r for r in found if 1 <= r[1] <= 12 and 1 <= r[2] <= 31)

    def resolve(self, today: date | None) -> date | None:
        """The one day the phrase means when said on `today`; None when it cannot tell."""
        if self.absolute:
            return _absolute_day(self, today)
        if today is None:
            return None
        if self.rule == "relative" and self.offset is not None:
            return today + timedelta(days=self.offset)
        if self.rule in ("weekday", "next_weekday") and self.weekday is not None:
            if self.rule == "next_weekday":
                monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
                return monday + timedelta(days=self.weekday)
            ahead = (self.weekday - today.weekday()) % 7 or 7
            return today + timedelta(days=ahead)
        if self.rule in ("dom", "weekday_dom") and self.day is not None:
            day = today + timedelta(days=1)
            for _ in range(800):
                if day.day == self.day and self.weekday in (None, day.weekday()):
                    return day
                day += timedelta(days=1)
        return None

    def canonical(self) -> str:
        """The phrase in one standard spelling this parser reads back to the same rule
        (what an extraction records when it cannot turn it into a calendar date)."""
        if self.rule == "iso" and self.year and self.month and self.day:
            return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"
        if self.rule == "relative":
            return {0: "today", 1: "tomorrow", 2: "the day after tomorrow"}[self.offset or 0]
        name = WEEKDAY_NAMES[self.weekday] if self.weekday is not None else ""
        if self.rule == "weekday":
            return name
        if self.rule == "next_weekday":
            return f"next {name}"
        if self.rule == "dom":
            return f"the {ordinal(self.day or 0)}"
        if self.rule == "weekday_dom":
            return f"{name} the {ordinal(self.day or 0)}"
        if self.rule == "numeric":
            return self.text.strip()
        month = MONTH_NAMES[(self.month or 1) - 1]
        year = f" {self.year}" if self.year else ""
        return f"{self.day} {month}{year}"


def _absolute_day(phrase: DatePhrase, today: date | None) -> date | None:
    readings = sorted(phrase.readings(), key=lambda r: (r[0] is None, r))
    if not readings:
        return None
    if phrase.rule == "numeric" and len(readings) > 1:
        return None  # 4/12 is the 4th of December or the 12th of April: not one day
    year, month, day = readings[0]
    if year is not None:
        try:
            return date(year, month, day)
        except ValueError:
            return None
    if today is None:
        return None
    for candidate_year in (today.year, today.year + 1):
        try:
            candidate = date(candidate_year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            return candidate
    return None


def _year(raw: str | None) -> int | None:
    if not raw:
        return None
    value = int(raw)
    return value + 2000 if value < 100 else value


def _phrase(rule: str, m: re.Match[str]) -> DatePhrase | None:
    g = m.groups()
    text = m.group(0)
    end = m.end()
    if text.endswith(".") and re.search(r"[a-z]{4}\.$", text, re.IGNORECASE):
        text, end = text[:-1], end - 1  # "the 4th of December." ends the sentence
    base = {"start": m.start(), "end": end, "text": text}
    if rule == "iso":
        return DatePhrase(rule=rule, year=int(g[0]), month=int(g[1]), day=int(g[2]), **base)
    if rule == "numeric":
        if "." in text and not g[2]:
            return None  # "8.30" is a time, not a date
        return DatePhrase(rule=rule, year=_year(g[2]), month=int(g[1]), day=int(g[0]), **base)
    if rule == "day_month":
        weekday = _WEEKDAYS[g[0].casefold()] if g[0] else None
        month = _MONTHS[g[2].casefold()]
        return DatePhrase(
            rule=rule, year=_year(g[3]), month=month, day=int(g[1]), weekday=weekday, **base
        )
    if rule == "month_day":
        weekday = _WEEKDAYS[g[0].casefold()] if g[0] else None
        month = _MONTHS[g[1].casefold()]
        return DatePhrase(
            rule=rule, year=_year(g[3]), month=month, day=int(g[2]), weekday=weekday, **base
        )
    if rule == "relative":
        offset = {"today": 0, "tomorrow": 1, "day after tomorrow": 2}[g[0].casefold()]
        return DatePhrase(rule=rule, offset=offset, **base)
    if rule == "next_week_weekday":
        return DatePhrase(rule="next_weekday", weekday=_WEEKDAYS[g[0].casefold()], **base)
    if rule == "weekday_dom":
        day = int(g[1] or g[2])
        return DatePhrase(rule=rule, day=day, weekday=_WEEKDAYS[g[0].casefold()], **base)
    if rule == "weekday":
        lead, name, week = (g[0] or "").casefold(), g[1].casefold(), (g[2] or "").casefold()
        if lead in ("this", "this coming", "coming") and week == "next week":
            return None  # "this Friday next week" means nothing
        kind = "next_weekday" if lead == "next" or week == "next week" else "weekday"
        return DatePhrase(rule=kind, weekday=_WEEKDAYS[name], **base)
    if rule == "dom":
        return DatePhrase(rule=rule, day=int(g[0]), **base)
    return None


def find_dates(text: str) -> list[DatePhrase]:
    """Every date phrase in `text`, in order; where patterns overlap the first one wins."""
    found: list[DatePhrase] = []
    taken: list[tuple[int, int]] = []
    for rule, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            phrase = _phrase(rule, m)
            if phrase is None or (phrase.day is not None and not 1 <= phrase.day <= 31):
                continue
            if phrase.absolute and not phrase.readings():
                continue
            taken.append((m.start(), m.end()))
            found.append(phrase)
    return sorted(found, key=lambda p: p.start)


def proposals(text: str) -> list[DatePhrase]:
    """Date phrases that propose a day: a bare weekday in a sentence about opening hours
    ("are you open on Tuesday?") asks about the business, it does not pick a day."""
    out = []
    for phrase in find_dates(text):
        if phrase.rule in ("weekday", "next_weekday"):
            sentence = _sentence_around(text, phrase.start)
            if _HOURS_TALK.search(sentence):
                continue
        out.append(phrase)
    return out


def _sentence_around(text: str, position: int) -> str:
    for m in _SENTENCE.finditer(text):
        if m.start() <= position < m.end():
            return m.group(0)
    return text


def says_date(text: str, iso: str, today: date | None) -> DatePhrase | None:
    """The phrase of `text` that proposes the day `iso` (said on `today`), if any."""
    try:
        wanted = date.fromisoformat(iso.strip())
    except ValueError:
        return None
    for phrase in proposals(text):
        if phrase.resolve(today) == wanted:
            return phrase
        if today is None and (wanted.year, wanted.month, wanted.day) in phrase.readings():
            return phrase
        if today is None and (None, wanted.month, wanted.day) in phrase.readings():
            return phrase
    return None


# --------------------------------------------------------------------------- times

# "one" .. "twelve": the numbers people write as words (hours, counts); shared with the judge.
NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        [
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ],
        start=1,
    )
}
# Number words beyond the clock's twelve, for amounts said aloud ("ninety nine", "forty-five").
_UNITS_WORDS = {
    **{w: n for w, n in NUMBER_WORDS.items()},
    "zero": 0,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SPOKEN_NUMBER = (
    r"(?:(?:a\s+(?=hundred|thousand))?(?:"
    + "|".join([*_UNITS_WORDS, *_TENS_WORDS, "hundred", "thousand"])
    + r")(?:[\s-]+(?:and\s+)?(?:"
    + "|".join([*_UNITS_WORDS, *_TENS_WORDS, "hundred", "thousand"])
    + r"))*)"
)


def spoken_number(text: str) -> int | None:
    """The whole number (0-999,999) that words say: "ninety nine" -> 99, "one hundred and
    fifty" -> 150, "a hundred and ten" -> 110, "one thousand five hundred" -> 1500, "twelve"
    -> 12; None when the words are not one number."""
    total, current = 0, None
    thousands = 0
    found = re.findall(r"[a-z]+", text.casefold())
    if found[:1] == ["a"] and found[1:2] in (["hundred"], ["thousand"]):
        found[0] = "one"
    for word in found:
        if word == "and":
            continue
        if word == "thousand":
            if thousands or (current is None and total == 0):
                return None
            thousands, total, current = (total + (current or 0)) * 1000, 0, None
            continue
        if word == "hundred":
            if current is None or current >= 10:
                return None
            total, current = total + current * 100, None
        elif word in _TENS_WORDS:
            if current is not None:
                return None
            current = _TENS_WORDS[word]
        elif word in _UNITS_WORDS:
            if current is not None and (current % 10 or current < 20):
                return None
            current = (current or 0) + _UNITS_WORDS[word]
        else:
            return None
    if current is None and total == 0 and not thousands:
        return None
    return thousands + total + (current or 0)


# Days of the month said aloud: "first" .. "thirty first" ("the twenty-first", "fourteenth
# of March"), as voice transcripts write them.
_ORDINAL_UNITS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9,
}  # fmt: skip
_ORDINAL_TEENS = {
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
    "twentieth": 20, "thirtieth": 30,
}  # fmt: skip
ORDINAL_WORDS: dict[str, int] = {
    **_ORDINAL_UNITS,
    **_ORDINAL_TEENS,
    **{f"{tens} {w}": n + tens_n for tens, tens_n in (("twenty", 20), ("thirty", 30))
       for w, n in _ORDINAL_UNITS.items() if n + tens_n <= 31},
}  # fmt: skip


def _ordinals(minimum: int) -> str:
    words = sorted((w for w, n in ORDINAL_WORDS.items() if n >= minimum), key=len, reverse=True)
    return "(?:" + "|".join(w.replace(" ", r"[\s-]") for w in words) + ")"


SPOKEN_ORDINAL = _ordinals(1)
# "first", "second" and "third" say other things too ("the first time"): alone, only from
# the fourth on is an ordinal surely a day of the month.
SPOKEN_DAY = _ordinals(4)


def ordinal_number(text: str) -> int | None:
    """The day number an ordinal says: "14th" -> 14, "twenty-first" -> 21; None otherwise."""
    digits = re.match(r"\s*(\d{1,2})(?:st|nd|rd|th)?\s*$", text)
    if digits:
        return int(digits.group(1))
    return ORDINAL_WORDS.get(re.sub(r"[\s-]+", " ", text.strip().casefold()))


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
            part_match = _DAY_PART.search(_sentence_around(text, m.start()))
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
    return [p for p in find_times(text) if not _HOURS_TALK.search(_sentence_around(text, p.start))]


def says_time(text: str, hhmm: str) -> TimePhrase | None:
    """The phrase of `text` that proposes the time `hhmm`, if any."""
    wanted = hhmm.strip()
    return next((p for p in time_proposals(text) if p.value == wanted), None)


# --------------------------------------------------------------------------- phrasing


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def date_options(day: date, today: date | None) -> list[str]:
    """Ways a person may say `day` on `today` that resolve back to exactly `day`, the most
    casual first; without a reference day only phrases that name the month."""
    name = WEEKDAY_NAMES[day.weekday()]
    month = MONTH_NAMES[day.month - 1]
    nth = ordinal(day.day)
    options: list[str] = []
    if today is not None:
        ahead = (day - today).days
        same_week = day.isocalendar()[:2] == today.isocalendar()[:2]
        next_week = (day - timedelta(days=7)).isocalendar()[:2] == today.isocalendar()[:2]
        if ahead == 1:
            options.append("tomorrow")
        if ahead == 2:
            options.append("the day after tomorrow")
        if same_week and ahead > 0:
            options += [f"this {name}", f"on {name}"]
        if next_week and ahead <= 7:
            options.append(f"next {name}")
        if next_week:
            options.append(f"{name} next week")
        if 0 < ahead < 28:
            options += [f"{name} the {nth}", f"the {nth}"]
    options += [f"the {nth} of {month}", f"{month} {nth}", f"{name} the {nth} of {month}"]
    return [o for o in dict.fromkeys(options) if _round_trip(o, day, today)]


def _round_trip(option: str, day: date, today: date | None) -> bool:
    found = find_dates(option)
    return len(found) == 1 and found[0].resolve(today or day) == day


def say_date(day: date, today: date | None, rng: random.Random, manner: Manner) -> str:
    """One way this customer says `day`: ISO for a precise customer, else a relative phrase
    when there is one (most people), now and then the day and month."""
    if manner == "precise":
        return day.isoformat()
    options = date_options(day, today)
    named = [o for o in options if " of " in o or o.split()[0] in MONTH_NAMES]
    relative = [o for o in options if o not in named]
    if relative and rng.random() < 0.8:
        return rng.choice(relative)
    return rng.choice(named or options)


_WORD_OF_HOUR = {n: w for w, n in NUMBER_WORDS.items()}


def _twelve(hour: int) -> int:
    return hour % 12 or 12


def time_options(hhmm: str, locale: str = "en_IE") -> list[str]:
    """Ways a person may say `hhmm` that resolve back to exactly it (without day-part words)."""
    hour, minute = (int(x) for x in hhmm.split(":"))
    h = _twelve(hour)
    suffix = "am" if hour < 12 else "pm"
    options: list[str] = []
    word = _WORD_OF_HOUR[h]
    if minute == 0:
        options += [f"at {h}", f"around {h}", f"{h}ish", f"{word} o'clock", f"{h}{suffix}"]
    elif minute == 30:
        if locale.startswith(("en_IE", "en_GB")):
            options += [f"half {word}", f"half {h}"]
        options += [f"half past {word}", f"{h}:30", f"{h}.30{suffix}"]
    elif minute == 15:
        options += [f"quarter past {h}", f"{h}:15"]
    else:
        options.append(f"{h}:{minute:02d}{suffix}")
    return [o for o in options if _time_trip(o, hhmm)]


def _time_trip(option: str, hhmm: str) -> bool:
    found = find_times(option)
    return len(found) == 1 and found[0].value == hhmm


def say_time(hhmm: str, rng: random.Random, manner: Manner, locale: str = "en_IE") -> str:
    """One way this customer says the time: 24-hour for a precise customer, else as people do."""
    if manner == "precise":
        return f"at {hhmm}"
    options = time_options(hhmm, locale)
    return rng.choice(options) if options else f"at {hhmm}"


def day_part(hhmm: str) -> str:
    hour = int(hhmm.split(":")[0])
    return "morning" if hour < 12 else "afternoon" if hour < 17 else "evening"
