"""Weekdays, calendar dates and days of the month a text names, which of them it withdraws
("not the 17th"), what a day is for (arrival, collection ...), and ranges ("2-6 August")."""

from __future__ import annotations

import re

from generator.dates import MONTH_NAMES, SPOKEN_DAY, SPOKEN_ORDINAL, ordinal_number
from judge.text import ANY_WEEKDAY

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# A weekday ("saturdays" too) that is not the far end of a range ("Monday to Friday" names
# opening days, not the customer's day).
WEEKDAY = re.compile(
    rf"(?<![–—-])(?<![–—-] )(\b{ANY_WEEKDAY})(?!\s?(?:[–—-]|to|till|until|through)\s?{ANY_WEEKDAY})",
    re.IGNORECASE,
)
# "Monday to Friday", "mon till thurs": the day before a weekday that ends a range.
_RANGE_START = re.compile(
    rf"\b{ANY_WEEKDAY}\W{{0,2}}\s*(?:to|till|until|through|thru)\s+$", re.IGNORECASE
)


def weekdays_in(text: str) -> list[re.Match[str]]:
    """The weekdays of `text` that are not the far end of a range ("moved to Friday" names a
    day, "Monday to Friday" opening days)."""
    return [m for m in WEEKDAY.finditer(text) if not _RANGE_START.search(text[: m.start()])]


MONTHS = tuple(name[:3].casefold() for name in MONTH_NAMES)
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_ORDINAL = re.compile(
    rf"\b(?:the\s+)?(\d{{1,2}}(?:st|nd|rd|th)|(?<=the ){SPOKEN_DAY})\b"
    rf"(?!\s+(?:of\s+)?{_MONTH})",
    re.I,
)
# "14th March", "March 14", "2026-03-14", and said aloud "fourteenth of march", "march the
# fourteenth".
_DATE = re.compile(
    rf"\b(\d{{1,2}}(?:st|nd|rd|th)?|{SPOKEN_ORDINAL}(?=\s+of\b))(?:\s+of)?\s+{_MONTH}"
    rf"|\b{_MONTH}\s+(?:the\s+)?(\d{{1,2}}(?:st|nd|rd|th)?|{SPOKEN_ORDINAL})\b"
    r"|\b\d{4}-(\d{2})-(\d{2})\b",
    re.IGNORECASE,
)


def day_name(token: str) -> str:
    """The weekday a token names, lower case ("Sat" -> "saturday")."""
    prefix = token[:3].casefold()
    return next(d for d in DAYS if d.startswith(prefix))


def calendar_dates(text: str) -> list[tuple[str, str]]:
    """(canonical month-day, verbatim) of the calendar dates in text."""
    found: list[tuple[str, str]] = []
    for m in _DATE.finditer(text):
        if m.group(5):
            month, day = int(m.group(5)), int(m.group(6))
        else:
            day = ordinal_number(m.group(1) or m.group(4)) or 0
            month = MONTHS.index((m.group(2) or m.group(3))[:3].casefold()) + 1
        if 1 <= day <= 31 and 1 <= month <= 12:
            found.append((f"{month:02d}-{day:02d}", m.group(0)))
    return found


def days_of_month(text: str) -> list[tuple[str, str]]:
    """(day number, verbatim) of "the 14th" written without a month."""
    return [(str(ordinal_number(m.group(1))), m.group(0)) for m in _ORDINAL.finditer(text)]


# "not the 17th, make it the 10th": the negated value is the one being withdrawn.
_WITHDRAWN = re.compile(
    r"\b(?:not|no longer|instead of|rather than|wasn't|isn't)\s+(?:on\s+|the\s+)?$", re.I
)


def kept_values(found: dict[str, str], text: str) -> dict[str, str]:
    """The values of `found` (value -> verbatim) that the text does not withdraw."""
    kept = {}
    for value, quote in found.items():
        at = text.find(quote)
        if at >= 0 and _WITHDRAWN.search(text[max(0, at - 20) : at]):
            continue
        kept[value] = quote
    return kept


# What a day is for: the customer arriving, leaving, collecting or having something delivered.
_ROLES = {
    "arrival": re.compile(r"\b(?:arriv\w*|check(?:ing)?[- ]in|coming)\b", re.I),
    "departure": re.compile(r"\b(?:leav\w*|depart\w*|check(?:ing)?[- ]out)\b", re.I),
    "collection": re.compile(r"\b(?:collect\w*|pick(?:ing)?[- ]?(?:it |them )?up)\b", re.I),
    "delivery": re.compile(r"\bdeliver\w*", re.I),
}


def role_days(clause: str) -> list[tuple[str, str, str]]:
    """(role, weekday, verbatim) when a clause names exactly one role and one weekday."""
    roles = [r for r, pattern in _ROLES.items() if pattern.search(clause)]
    days = {day_name(m.group(1)): m.group(0) for m in weekdays_in(clause)}
    kept = kept_values(days, clause)
    if len(roles) != 1 or len(kept) != 1:
        return []
    [(day, quote)] = kept.items()
    return [(roles[0], day, quote)]


_RANGE_JOIN = re.compile(r"\d\s?(?:[–—-]|to|till|until)\s?$", re.IGNORECASE)


def range_end(text: str, start: int) -> bool:
    """The value at `start` closes a range ("18:00-19:30", "2-6 August")."""
    return bool(_RANGE_JOIN.search(text[max(0, start - 12) : start]))


def ends_range(clause: str, quote: str) -> bool:
    """`quote`, found in `clause`, closes a range there."""
    at = clause.find(quote)
    return at >= 0 and range_end(clause, at)
