"""Values said rather than written, as bot replies and voice transcripts put them: spoken money
and durations, numbers read out digit by digit, and loosely named hours ("at 2", "half 9")."""

from __future__ import annotations

import re

from generator.dates import NUMBER_WORDS, SPOKEN_NUMBER
from generator.facts.clock import time_value
from generator.facts.duration import NOT_AN_AGE

# Amounts said aloud (voice transcripts): "twelve pounds ninety nine", "about four weeks".
SPOKEN_MONEY = re.compile(
    rf"\b(?P<n>{SPOKEN_NUMBER})\s+(?P<unit>pounds?|euros?|dollars?|francs?|quid|bucks|pence|"
    r"cents?)"
    rf"(?:\s+(?:and\s+)?(?P<cents>{SPOKEN_NUMBER})(?:\s+(?:pence|p|cents?))?)?\b",
    re.IGNORECASE,
)
SPOKEN_DURATION = re.compile(
    rf"\b(?P<n>{SPOKEN_NUMBER})\s+(?P<unit>minutes?|hours?|days?|weeks?|months?|years?)\b"
    + NOT_AN_AGE,
    re.IGNORECASE,
)
SPOKEN_CURRENCY = {"p": "GBP", "q": "GBP", "e": "EUR", "d": "USD", "b": "USD", "f": "CHF"}
# "fifty-five pence", "ninety cents": minor units, as `generator.facts.money` reads "55p".
SPOKEN_MINOR = {"pence": "GBX", "cent": "CENT", "cents": "CENT"}
# A number read out digit by digit (voice transcripts): "oh seven nine one two double four ...".
_DIGIT = {
    **{word: str(n) for word, n in NUMBER_WORDS.items() if n < 10},
    **dict.fromkeys(("oh", "o", "zero", "nought"), "0"),
}
_DIGIT_WORD = r"(?:(?:double|triple)\s+)?(?:" + "|".join(_DIGIT) + r")"
SPOKEN_DIGITS = re.compile(rf"\b{_DIGIT_WORD}(?:[\s,-]+{_DIGIT_WORD}){{6,}}\b", re.IGNORECASE)


def spoken_digits(text: str) -> str:
    """The digits a number read out digit by digit says: "oh seven double four" -> "0744"."""
    digits, repeat = "", 1
    for word in re.findall(r"[a-z]+", text.casefold()):
        if word in ("double", "triple"):
            repeat = 2 if word == "double" else 3
            continue
        digits += _DIGIT.get(word, "") * repeat
        repeat = 1
    return digits


# How people name an hour without writing a time: "at 2", "10ish", "around 11", "after 5", and
# hour ranges "9-1", "Mon-Fri 8-6", "10 till 2".
_HOUR_TOKEN = r"(\d{1,2}|" + "|".join(NUMBER_WORDS) + r")"
_NOT_HOURS = r"(?!\s*(?:min|hour|hr|day|week|month|year|people|person|guest|kid|child|night|player|%|€|\$|£))"
_LOOSE_HOUR = re.compile(
    r"\b(?:at|around|about|by|after|before|from|till|until|ish)\s+(\d{1,2})(?![\d%]|[:.,]\d)(?:\s?ish)?"
    + _NOT_HOURS
    + rf"|\b{_HOUR_TOKEN}\s?-?ish\b",
    re.IGNORECASE,
)
_HOUR_RANGE = re.compile(
    r"(?<![\d.,:/-])(\d{1,2})\s?(?:-|–|—|to|till|until)\s?(\d{1,2})(?![\d:/%-]|[.,]\d)"
    + _NOT_HOURS,
    re.IGNORECASE,
)


# "ten o'clock", "half 9" / "half past 9" (9:30), "quarter past 10", "quarter to 11", "noon".
_SPOKEN_TIME = re.compile(
    rf"\b{_HOUR_TOKEN}\s*o'?\s?clock\b|\bhalf(?:\s+past)?\s+{_HOUR_TOKEN}\b"
    rf"|\bquarter\s+(past|to)\s+{_HOUR_TOKEN}\b|\b(noon|midday)\b"
    rf"|\b{_HOUR_TOKEN}\s+(fifteen|thirty|forty[\s-]five)\b",
    re.IGNORECASE,
)


def _hour(token: str) -> int:
    return NUMBER_WORDS.get(token.casefold()) or int(token)


def _both_halves(hour: int, minute: int) -> set[str]:
    if 1 <= hour <= 12:
        return {time_value(hour % 12, minute), time_value(hour % 12 + 12, minute)}
    return {time_value(hour, minute)} if 13 <= hour <= 23 else set()


def loose_hours(text: str) -> set[str]:
    """The clock times a loosely named hour may mean ("at 2" -> 02:00 and 14:00; "9-1" -> 09:00,
    21:00, 01:00, 13:00; "half 9" -> 09:30 and 21:30; "ten o'clock"; "noon")."""
    found: set[str] = set()
    for m in _LOOSE_HOUR.finditer(text):
        found |= _both_halves(_hour(m.group(1) or m.group(2)), 0)
    for m in _HOUR_RANGE.finditer(text):
        found |= _both_halves(int(m.group(1)), 0) | _both_halves(int(m.group(2)), 0)
    for m in _SPOKEN_TIME.finditer(text):
        if m.group(1):
            found |= _both_halves(_hour(m.group(1)), 0)
        elif m.group(2):
            found |= _both_halves(_hour(m.group(2)), 30)
        elif m.group(3):
            hour = _hour(m.group(4))
            found |= (
                _both_halves(hour, 15)
                if m.group(3).casefold() == "past"
                else _both_halves(hour - 1 or 12, 45)
            )
        elif m.group(5):
            found.add("12:00")
        else:
            minute = {"f": 15, "t": 30}.get(m.group(7)[0].casefold(), 45)
            found |= _both_halves(_hour(m.group(6)), minute)
    return found
