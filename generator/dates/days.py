"""Reading dates as people say them: `DatePhrase`, `find_dates`, and the phrases that propose
a day (`proposals`, `says_date`), resolved against a reference day."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from generator.dates.words import MONTH_NAMES, WEEKDAY_NAMES, ordinal

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
HOURS_TALK = re.compile(
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
            sentence = sentence_around(text, phrase.start)
            if HOURS_TALK.search(sentence):
                continue
        out.append(phrase)
    return out


def sentence_around(text: str, position: int) -> str:
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
