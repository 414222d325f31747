"""Durations: the one reader of spans of time ('45 min', '2 hours', '1h 30', '1 Std. 30 Min.',
'3 working days', 'an hour and a half') shared by the org import, the generator and the judge,
and their canonical value in minutes. In the lowest layer so the org import reads an org
folder's durations with it; `generator.facts` re-exports it."""

from __future__ import annotations

import re
from decimal import Decimal

from qalab.values.money import money_text, parse_amount

# "8 years old", "a 5-year-old", "6 and 11 year olds", "over 2 years of age": an age, not a
# span.
NOT_AN_AGE = r"(?![\s-]+(?:olds?|of age)\b)"
# Hours and minutes in the languages an org folder is written in (English first).
HOUR_UNITS = r"hours?|hrs?\.?|h|std\.?|stunden?|heures?|horas?|ore|ora|uur|timmar|timme"
MINUTE_UNITS = r"minutes?|mins?\.?|m|minuten|minutos|minuti|minuter|minutter|mn"
# "2 hours 20 minutes", "1h 50m", "1 hr 30", "1h30", "1 Std. 30 Min.", "2 heures 30": one span.
# Minutes after a space and without a unit must end the span ("1h 30 days" is not 90 minutes);
# glued to the hour ("1h30") they need not.
COMPOUND_DURATION_RE = re.compile(
    rf"(?<![\d.,])(\d{{1,2}})\s?(?:{HOUR_UNITS})"
    rf"(?:\s?(?:(?:and|und|et|y|e|&)\s)?([0-5]?\d)\s?(?:{MINUTE_UNITS})(?!\w)"
    r"|([0-5]\d)(?![\d]|[.,:]\d)"
    r"|\s([0-5]?\d)(?![\d\w%€$£]|\s?[^\W\d_]|[.,:]\d))",
    re.IGNORECASE,
)
DURATION_RE = re.compile(
    rf"(?<![\d.,])(\d{{1,2}})\s?(?:{HOUR_UNITS})\s?(?:(?:and|und|et|y|e|&)\s)?([0-5]?\d)"
    rf"(?:\s?(?:{MINUTE_UNITS})(?!\w)|(?![\d\w%€$£]|\s?[^\W\d_]|[.,:]\d))",
    re.IGNORECASE,
)
DURATION_RE = re.compile(
    r"(?<![\d.,])(\d+(?:[.,]\d+)?)(?:\+|\s?-?ish)?[\s-]?(?:(?:working|business|calendar|clear|full|"
    r"school|banking)[\s-])?(minutes?|mins?|minuten|minutos|minuti|minuter|hours?|hrs?|"
    r"h(?=\b)(?![.:]\d)|stunden?|std\b\.?|heures?|horas?|uur|days?|tage?|jours?|d[ií]as?|dagen|"
    r"weeks?|wochen?|semaines?|semanas?|wks?|months?|years?|yrs?)\b"
    # "60 day-passes", "10 hour-blocks" count things; "a 2-hour-long class" is still a span.
    r"(?!-(?!long\b)[a-z])" + NOT_AN_AGE,
    re.IGNORECASE,
)

# A span said in words: "an hour", "half an hour", "an hour and a half", "two hours",
# "a quarter of an hour", "eine halbe Stunde", "une heure et demie", "media hora".
_WORD_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "forty-five": 45, "forty five": 45, "fifty": 50, "sixty": 60,
    "ninety": 90, "eine": 1, "ein": 1, "une": 1, "un": 1, "una": 1, "uno": 1, "zwei": 2,
    "deux": 2, "dos": 2,
}  # fmt: skip
_NUMBER_WORD = "|".join(sorted(map(re.escape, _WORD_NUMBERS), key=len, reverse=True))
_HALF_HOUR = (
    r"(?:an?\s+)?half[\s-](?:an\s+)?hour|(?:eine\s+)?halbe\s+stunde|une\s+demi-heure|media\s+hora"
)
PHRASE_DURATION_RE = re.compile(
    r"(?<![\w-])(?:"
    rf"(?P<and_half>{_NUMBER_WORD})\s+hours?\s+and\s+a\s+half"
    rf"|(?P<n_half>{_NUMBER_WORD}|\d+)\s+and\s+a\s+half\s+hours?"
    r"|(?P<one_half>(?:eineinhalb|anderthalb)\s+stunden|une\s+heure\s+et\s+demie|una\s+hora\s+y\s+media)"
    rf"|(?P<and_quarter>{_NUMBER_WORD})\s+hours?\s+and\s+a\s+quarter"
    r"|(?P<three_quarters>three[\s-]quarters\s+of\s+an\s+hour|dreiviertelstunde)"
    r"|(?P<quarter>(?:a\s+)?quarter\s+of\s+an\s+hour|(?:eine\s+)?viertelstunde)"
    rf"|(?P<half>{_HALF_HOUR})"
    rf"|(?P<n>{_NUMBER_WORD})\s+(?P<unit>minutes?|hours?|days?|weeks?|stunden?|heures?|horas?|"
    r"minuten|tage?|jours?)"
    r")(?![\w-])",
    re.IGNORECASE,
)

# Duration units by first letter, in minutes ("m" minutes is the default).
MINUTES_PER = {"h": 60, "d": 60 * 24, "w": 60 * 24 * 7}
# A month is a twelfth of a year, so "12 months" and "1 year" are one span.
MONTH = 60 * 24 * 30
YEAR = 12 * MONTH
_HOUR_WORD = re.compile(r"^(?:h|std|stunde|heure|hora|ore|ora|uur|tim)", re.IGNORECASE)
_DAY_WORD = re.compile(r"^(?:d|tag|jour)", re.IGNORECASE)
_WEEK_WORD = re.compile(r"^(?:w|semain|seman)", re.IGNORECASE)


def unit_minutes(unit: str) -> int:
    """Minutes in one `unit` ("min", "hrs", "day", "weeks", "month", "yr", "Stunden", ...)."""
    unit = unit.casefold()
    if unit.startswith("mo"):
        return MONTH
    if unit.startswith("y"):
        return YEAR
    if _HOUR_WORD.match(unit):
        return MINUTES_PER["h"]
    if _DAY_WORD.match(unit):
        return MINUTES_PER["d"]
    if _WEEK_WORD.match(unit):
        return MINUTES_PER["w"]
    return 1


def compound_minutes(match: re.Match[str]) -> str:
    """The canonical minutes of one `COMPOUND_DURATION_RE` match ('1h 30m' -> '90')."""
    minutes = match.group(2) or match.group(3) or match.group(4)
    return str(int(match.group(1)) * 60 + int(minutes))


def duration_minutes(match: re.Match[str]) -> str | None:
    """The canonical minutes of one `DURATION_RE` match ('1.5 hours' -> '90', '2 days' ->
    '2880'); None when the number does not parse."""
    amount = parse_amount(match.group(1))
    if amount is None:
        return None
    return money_text(amount * unit_minutes(match.group(2)))


def phrase_minutes(match: re.Match[str]) -> str:
    """The canonical minutes of one `PHRASE_DURATION_RE` match ('half an hour' -> '30')."""
    groups = match.groupdict()
    if groups["and_half"]:
        return str(_WORD_NUMBERS[_key(groups["and_half"])] * 60 + 30)
    if groups["n_half"]:
        n = groups["n_half"]
        return str((int(n) if n.isdigit() else _WORD_NUMBERS[_key(n)]) * 60 + 30)
    if groups["one_half"]:
        return "90"
    if groups["and_quarter"]:
        return str(_WORD_NUMBERS[_key(groups["and_quarter"])] * 60 + 15)
    if groups["three_quarters"]:
        return "45"
    if groups["quarter"]:
        return "15"
    if groups["half"]:
        return "30"
    minutes = Decimal(_WORD_NUMBERS[_key(groups["n"])]) * unit_minutes(groups["unit"])
    return money_text(minutes)


def _key(word: str) -> str:
    return re.sub(r"\s+", " ", word.casefold())
