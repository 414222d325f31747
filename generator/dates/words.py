"""Calendar and number words: weekday and month names, numbers and ordinals said as words
("ninety nine", "the twenty-first"), shared by the date and time parser and the judge."""

from __future__ import annotations

import re

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


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
