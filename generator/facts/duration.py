"""Durations: the one reader of spans of time ('45 min', '2 hours', '1h 30m', '3 working days')
shared by generator and judge, and their canonical value in minutes."""

from __future__ import annotations

import re

from generator.facts.money import money_text, parse_amount

# "8 years old", "a 5-year-old", "6 and 11 year olds", "over 2 years of age": an age, not a
# span.
NOT_AN_AGE = r"(?![\s-]+(?:olds?|of age)\b)"
# "2 hours 20 minutes", "1h 50m", "1 hr 30": one span.
COMPOUND_DURATION_RE = re.compile(
    r"(?<![\d.,])(\d{1,2})\s?(?:hours?|hrs?|h)\s?(?:and\s)?(\d{1,2})\s?(?:minutes?|mins?|m)\b",
    re.IGNORECASE,
)
DURATION_RE = re.compile(
    r"(?<![\d.,])(\d+(?:[.,]\d+)?)(?:\+|\s?-?ish)?[\s-]?(?:(?:working|business|calendar|clear|full|"
    r"school|banking)[\s-])?(minutes?|mins?|hours?|hrs?|h(?=\b)(?![.:]\d)|days?|weeks?|"
    r"wks?|months?|years?|yrs?)\b"
    # "60 day-passes", "10 hour-blocks" count things; "a 2-hour-long class" is still a span.
    r"(?!-(?!long\b)[a-z])" + NOT_AN_AGE,
    re.IGNORECASE,
)

# Duration units by first letter, in minutes ("m" minutes is the default).
MINUTES_PER = {"h": 60, "d": 60 * 24, "w": 60 * 24 * 7}
# A month is a twelfth of a year, so "12 months" and "1 year" are one span.
MONTH = 60 * 24 * 30
YEAR = 12 * MONTH


def unit_minutes(unit: str) -> int:
    """Minutes in one `unit` ("min", "hrs", "day", "weeks", "month", "yr", ...)."""
    unit = unit.casefold()
    if unit.startswith("mo"):
        return MONTH
    if unit.startswith("y"):
        return YEAR
    return MINUTES_PER.get(unit[0], 1)


def compound_minutes(match: re.Match[str]) -> str:
    """The canonical minutes of one `COMPOUND_DURATION_RE` match ('1h 30m' -> '90')."""
    return str(int(match.group(1)) * 60 + int(match.group(2)))


def duration_minutes(match: re.Match[str]) -> str | None:
    """The canonical minutes of one `DURATION_RE` match ('1.5 hours' -> '90', '2 days' ->
    '2880'); None when the number does not parse."""
    amount = parse_amount(match.group(1))
    if amount is None:
        return None
    return money_text(amount * unit_minutes(match.group(2)))
