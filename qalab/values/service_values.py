"""A service's price and duration as an org folder writes them, read whole with the shared
readers (`money`, `duration`): "£52", "from €80", "80-120 €", "free"; "45 minutes", "1h 30",
"about an hour", "2 visits".

How a reading is represented (the manifest and the org tables hold the same):

- price: `amount` is the price, or the lowest price of a range or a "from" price; `kind` says
  which ("exact", "from", "range"); `maximum` is the top of a range. "free" is an exact 0.
- duration: `minutes` is the span, or the shortest of a range ("20-30 min"); `maximum` the
  longest. A value that is no span of time ("2 visits", "half day", "varies") has no minutes:
  it is descriptive text, never an error.

Only a malformed value is an error (`ValueFormError`): empty, negative, or a price with no
amount ("abc", "TBC").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from qalab.values.duration import (
    COMPOUND_DURATION_RE,
    DURATION_RE,
    PHRASE_DURATION_RE,
    compound_minutes,
    duration_minutes,
    phrase_minutes,
)
from qalab.values.money import (
    AMOUNT,
    FREE_RE,
    MoneyMention,
    currencies_of,
    money_mentions,
    parse_amount,
)

PriceKind = Literal["exact", "from", "range"]
PRICE_KINDS: tuple[PriceKind, ...] = ("exact", "from", "range")


class ValueFormError(ValueError):
    """A value no reading makes sense of: empty, negative, or a price without an amount."""


@dataclass(frozen=True)
class PriceReading:
    amount: Decimal
    kind: PriceKind = "exact"
    maximum: Decimal | None = None
    # The ISO codes the text's currency may be, the usual one first; () when it names none.
    currencies: tuple[str, ...] = ()


@dataclass(frozen=True)
class DurationReading:
    minutes: int | None
    maximum: int | None = None


# "CHF 120.-", "120,- €", "99,--" (or an en dash): the Swiss and German way of writing a whole amount.
_WHOLE_DASH = re.compile(r"(?<=\d)[.,][-–—]{1,2}(?![\d])")
# "-5", "£-5", "- £5", "-€5", "from -5": a minus before the first amount or its currency.
_NEGATIVE = re.compile(r"(?:^|[^\w\s.,])[-−]\s*\d|^\D*?(?:^|[\s:(])[-−]\s*(?:[^\w\s]{1,3}\s*)?\d")
_BARE = re.compile(rf"(?<![\w.,])(?:{AMOUNT})")
_JOIN = re.compile(r"\s*(?:[-–—~]|to|bis|à|a|and|und|et|y|till|until|or)\s*", re.IGNORECASE)
_FROM_BEFORE = re.compile(
    r"(?<!\w)(?:from|starting|starts|prices?\s+from|ab|à\s+partir\s+de|a\s+partir\s+de|dès|"
    r"desde|vanaf|a\s+partire\s+da|da|från|fra|od|min(?:imum|\.)?|at\s+least|upwards\s+of|"
    r"über|mindestens)(?!\w)",
    re.IGNORECASE,
)
_FROM_AFTER = re.compile(
    r"^\s*(?:\+(?!\s*(?:vat|mwst|ust|tva|iva|btw|gst|tax|moms))|and\s+up|&\s+up|and\s+above|"
    r"or\s+more|upwards|onwards|und\s+mehr|et\s+plus|y\s+más|e\s+oltre|\(?min(?:imum|\.)?\)?)",
    re.IGNORECASE,
)


def _clean(text: str) -> str:
    text = text.replace("\u2212", "-").replace("\u00a0", " ").replace("\u202f", " ")
    return " ".join(text.split())


def _number(value: object) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return None
    return None


def read_price(value: object) -> PriceReading:
    """Read one price value (a number or text); raise ValueFormError when it is malformed."""
    number = _number(value)
    if number is not None:
        if number < 0:
            raise ValueFormError("a price cannot be negative")
        return PriceReading(number)
    if not isinstance(value, str):
        raise ValueFormError(f"a price is a number or a text, not {type(value).__name__}")
    text = _WHOLE_DASH.sub("", _clean(value))
    if not text:
        raise ValueFormError("the price is empty: write a number, a text such as '£52' or 'free'")
    if FREE_RE.match(text) or (FREE_RE.search(text) and not re.search(r"\d", text)):
        return PriceReading(Decimal(0))
    if _NEGATIVE.search(text):
        raise ValueFormError("a price cannot be negative")
    mentions = money_mentions(text)
    if not mentions:
        mentions = [
            MoneyMention(amount, m.start(), m.end(), "")
            for m in _BARE.finditer(text)
            if (amount := parse_amount(m.group(0))) is not None
        ]
    if not mentions:
        raise ValueFormError(
            "no amount in this price: write a number or a text with one ('£52', 'from €80', "
            "'80–120 €'), or 'free'"
        )
    return _reading(text, mentions)


def _reading(text: str, mentions: list[MoneyMention]) -> PriceReading:
    codes: tuple[str, ...] = ()
    for mention in mentions:
        if not mention.marker:
            continue
        named = currencies_of(mention.marker)
        if not named:
            raise ValueFormError(
                f"{mention.marker.strip()!r} is a minor unit: write the price in the main "
                "currency (e.g. 0.50)"
            )
        common = tuple(c for c in (codes or named) if c in named)
        if not common:
            raise ValueFormError(f"one price in two currencies ({codes[0]} and {named[0]})")
        codes = common
    first = mentions[0]
    second = mentions[1] if len(mentions) > 1 else None
    if second is not None and _JOIN.fullmatch(text[first.end : second.start]):
        low, high = sorted((first.amount, second.amount))
        if low != high:
            return PriceReading(low, "range", high, codes)
    if _FROM_BEFORE.search(text[: first.start]) or _FROM_AFTER.match(text[first.end :]):
        return PriceReading(first.amount, "from", None, codes)
    return PriceReading(first.amount, "exact", None, codes)


# ------------------------------------------------------------------------------- durations

_APPROX_BEFORE = re.compile(
    r"^(?:about|approx(?:imately|\.)?|around|roughly|circa|ca\.|c\.|~|up\s+to|max(?:imum|\.)?|"
    r"at\s+least|min(?:imum|\.)?|typically|usually|allow|plan|takes?|ungefähr|etwa|rund|bis\s+zu|"
    r"environ|jusqu'à|aprox(?:\.|imadamente)?|unos|unas|circa|ongeveer)\s*:?\s*",
    re.IGNORECASE,
)
_APPROX_AFTER = re.compile(
    r"\s*(?:\(?approx(?:imately|\.)?\)?|or\s+so|-?ish|long|max(?:imum|\.)?|in\s+total|total|"
    r"per\s+(?:session|visit|treatment|appointment|person|class)|each|ca\.)\s*$",
    re.IGNORECASE,
)
_FRACTION = re.compile(r"(\d+)?\s*(?:½|1/2)(?!\d)")
_CLOCK_SPAN = re.compile(r"^(\d{1,2}):([0-5]\d)\s*(?:h|hrs?|hours?|std\.?)?$", re.IGNORECASE)
_DURATION_JOIN = re.compile(r"\s*(?:[-–—]|to|bis|à)\s*", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?$")
MAX_MINUTES = 100_000


def _half(match: re.Match[str]) -> str:
    return f"{match.group(1) or 0}.5"


def _span(text: str) -> Decimal | None:
    """Minutes of `text` when the whole of it is one span of time, else None."""
    if m := COMPOUND_DURATION_RE.fullmatch(text):
        return Decimal(compound_minutes(m))
    if m := _CLOCK_SPAN.match(text):
        return Decimal(int(m.group(1)) * 60 + int(m.group(2)))
    if (m := DURATION_RE.fullmatch(text)) and (minutes := duration_minutes(m)) is not None:
        return Decimal(minutes)
    if m := PHRASE_DURATION_RE.fullmatch(text):
        return Decimal(phrase_minutes(m))
    return None


def _core(text: str) -> str:
    text = _FRACTION.sub(_half, _clean(text)).rstrip(".")
    for _ in range(3):
        text = _APPROX_AFTER.sub("", _APPROX_BEFORE.sub("", text)).strip()
    return text


def _range(text: str) -> tuple[Decimal, Decimal] | None:
    """'20-30 min', '1-2 hours', '30 min - 1 hour': both ends in minutes."""
    for join in _DURATION_JOIN.finditer(text):
        low, high = text[: join.start()], text[join.end() :]
        top = _span(high)
        if top is None or not low:
            continue
        bottom = _span(low)
        if bottom is None and _BARE_NUMBER.match(low):
            unit = re.sub(r"^[\d.,\s]+", "", high)  # "20" in "20-30 min" counts in minutes
            bottom = _span(f"{low} {unit}")
        if bottom is not None:
            return (bottom, top) if bottom <= top else (top, bottom)
    return None


def _whole_minutes(value: Decimal) -> int | None:
    minutes = int(value.to_integral_value())
    return minutes if 0 < minutes <= MAX_MINUTES else None


def read_duration(value: object) -> DurationReading:
    """Read one duration value: minutes as a number, or text; descriptive text (no span of
    time, or longer than ten weeks) has no minutes. Raise ValueFormError when malformed."""
    number = _number(value)
    if number is not None:
        if number <= 0:
            raise ValueFormError("a duration must be more than 0 minutes")
        if number != number.to_integral_value():
            raise ValueFormError("not whole minutes: write minutes, e.g. '90' or '1h30'")
        return DurationReading(int(number))
    if not isinstance(value, str):
        raise ValueFormError(f"a duration is a number or a text, not {type(value).__name__}")
    text = _clean(value)
    if not text:
        raise ValueFormError("the duration is empty: write minutes, or a text such as '1h 30'")
    if re.match(r"^[-−]\s*\d", text):
        raise ValueFormError("a duration cannot be negative")
    core = _core(text)
    if _BARE_NUMBER.match(core):
        minutes = parse_amount(core)
        if minutes is None or minutes <= 0:
            raise ValueFormError("a duration must be more than 0 minutes")
        return DurationReading(_whole_minutes(minutes))
    span = _span(core)
    if span is not None:
        return DurationReading(_whole_minutes(span))
    ends = _range(core)
    if ends is not None:
        low, high = _whole_minutes(ends[0]), _whole_minutes(ends[1])
        if low is not None and high is not None:
            return DurationReading(low, high if high != low else None)
    return DurationReading(None)
