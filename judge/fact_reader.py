"""Read checkable facts (money, times, durations, percentages, phones, emails, URLs) out of
text: `extract_facts`, built on the shared readers of `generator.facts` plus what only a reader
of replies and sources needs (spoken values, masked dates, phone cues, bare KB decimals)."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from generator.dates import spoken_number
from generator.facts.clock import TIME_12H_RE, TIME_RE, time_12h, time_24h, time_value
from generator.facts.duration import (
    COMPOUND_DURATION_RE,
    DURATION_RE,
    compound_minutes,
    duration_minutes,
    unit_minutes,
)
from generator.facts.money import (
    CURRENCY_SYMBOL,
    MONEY,
    money_of,
    money_text,
    parse_amount,
    range_partners,
)
from generator.facts.phone import PHONE_RE, phone_digits
from judge.spoken import (
    SPOKEN_CURRENCY,
    SPOKEN_DIGITS,
    SPOKEN_DURATION,
    SPOKEN_MINOR,
    SPOKEN_MONEY,
    spoken_digits,
)
from qalab.values.money import RANGE_REACH

FACT_KINDS = ("money", "time", "duration", "percent", "phone", "email", "url")

# Read from the start of a run of local-part characters only (a match from inside the run would
# end at the same "@" and was found from its start): one long token is read once, not once
# from each of its characters (issue 33).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+")
_TLDS = r"(?:com|ie|org|net|eu|de|fr|es|it|nl|io|uk|co\.uk|info|biz)"
_URL = re.compile(
    r"(?:https?://|www\.)[^\s<>()\"']+"
    rf"|(?<![\w@.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.{_TLDS}\b(?:/[^\s<>()\"']*)?",
    re.IGNORECASE,
)
# Dates are masked (never facts themselves) so "15.03.2026" is not read as a time or a phone.
_DATE = re.compile(
    # "2026-03-15", "15-03-26", but not inside a dashed phone number ("+33-1-23-45-67-89").
    r"(?<![\d+]-)(?<!\+)\b(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}-\d{1,2}-\d{2,4})\b(?!-\d)"
    r"|\b\d{1,2}(?:[./]\d{1,2}[./-]|-\d{1,2}[./])\d{2,4}\b"
    # "14/3", "3/14": a day and a month either way round; "$60/60 min" is a rate, no date.
    r"|(?<![$£€¥₹])\b(?:(?:[12]?\d|3[01])/(?:0?[1-9]|1[0-2])|(?:0?[1-9]|1[0-2])/(?:[12]?\d|3[01]))\b"
)
# "by 23.04.", "until 20.07." (day and month with a closing point, after a word that introduces
# a date): a date, not the time 23:04.
_DOTTED_DATE = re.compile(
    r"\b(?:by|until|till|on|to|from|before|after|since|dated|due|expires?)\s+"
    r"(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.(?!\d)",
    re.IGNORECASE,
)
_PRICE_O = re.compile(rf"(?:{CURRENCY_SYMBOL})\d{{1,4}}O+(?![A-Za-z])")
_BARE_DECIMAL = re.compile(r"(?<![\d.,])\d+[.,]\d{2}(?![\d])")
_PERCENT = re.compile(r"(?<![\d.,])(\d+(?:[.,]\d+)?)\s?(?:%|per ?cent\b)", re.IGNORECASE)
# Characters before a range's reach that its patterns' look-behinds may read.
_LOOK_BEHIND = 16
_PHONE_CUE = re.compile(r"\b(?:call|phone|tel|ring|mobile|whatsapp|text|contact|reach)", re.I)


@dataclass(frozen=True)
class Fact:
    """One claim found in text; `value` is canonical, [start, end) its span in the text."""

    kind: str
    value: str
    start: int
    end: int
    # A time written without am/pm and an hour <= 12 ("6:00") may mean either half of the day.
    ambiguous_12h: bool = False

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.value}"


def url_host(value: str) -> str:
    return value.split("/", 1)[0]


def mask(chars: list[str], start: int, end: int) -> None:
    """Blank out chars[start:end] in place, so a value read once is not read again."""
    for i in range(start, end):
        chars[i] = " "


_DIGIT = re.compile(r"\d")
# The only patterns that can match a text without a digit.
_NO_DIGIT_NEEDED = frozenset({_EMAIL, _URL, SPOKEN_DIGITS, SPOKEN_MONEY, SPOKEN_DURATION})


def extract_facts(text: str, *, default_currency: str = "EUR", lenient: bool = False) -> list[Fact]:
    """All facts in `text`, in order. `lenient` (for support sources) also reads bare '80.00'
    and numbers not dialled or introduced as phones."""
    remembered = _remembered if len(text) <= _LONG else _remembered_long
    strict, every = remembered(text, default_currency)
    return list(every if lenient else strict)


# The checks of a case read the same KB and replies many times (the KB ~5 times): a text is
# read once for both readings and remembered (issue 19: the deterministic checks of a
# Regression run in under 2 CPU seconds). A long KB (every fixture of a big org carries it
# whole) is kept for the current case only (its text and its readable text), so the memory
# held stays bounded: 256 texts of at most 20,000 characters, and two long ones.
_LONG = 20_000


@functools.lru_cache(maxsize=256)
def _remembered(text: str, default_currency: str) -> tuple[tuple[Fact, ...], tuple[Fact, ...]]:
    return _both_readings(text, default_currency)


@functools.lru_cache(maxsize=2)
def _remembered_long(text: str, default_currency: str) -> tuple[tuple[Fact, ...], tuple[Fact, ...]]:
    return _both_readings(text, default_currency)


def _both_readings(text: str, default_currency: str) -> tuple[tuple[Fact, ...], tuple[Fact, ...]]:
    """The facts of `text` (strict, lenient), read once for both."""
    found = sorted(_read_facts(text, default_currency=default_currency), key=lambda f: f[0].start)
    return tuple(f for f, lenient_only in found if not lenient_only), tuple(f for f, _ in found)


def _read_facts(text: str, *, default_currency: str) -> list[tuple[Fact, bool]]:
    """Every fact of `text`, unsorted, each with whether only a lenient reader takes it.

    Which facts a strict reader takes does not depend on the lenient ones: the bare decimals
    are never masked, and a phone number not dialled like one is masked either way."""
    found: list[tuple[Fact, bool]] = []

    def add(fact: Fact, lenient_only: bool = False) -> None:
        found.append((fact, lenient_only))

    # A scanned price list writes "£6O" for £60: read the letter O among a price's digits.
    chars = list(_PRICE_O.sub(lambda m: m.group(0).replace("O", "0"), text))
    # The text as masked so far, joined again only after a mask (most scans find nothing).
    joined = "".join(chars)
    dirty = False

    def masked() -> str:
        nonlocal joined, dirty
        if dirty:
            joined, dirty = "".join(chars), False
        return joined

    def blank(start: int, end: int) -> None:
        nonlocal dirty
        mask(chars, start, end)
        dirty = True

    # Most patterns need a digit: on a text without one (a heading, most of a reply) they
    # cannot match, so they are not run.
    digits = _DIGIT.search(joined) is not None

    def scan(pattern: re.Pattern[str]) -> Iterable[re.Match[str]]:
        if not digits and pattern not in _NO_DIGIT_NEEDED:
            return
        for match in list(pattern.finditer(masked())):
            blank(match.start(), match.end())
            yield match

    for m in scan(_EMAIL):
        add(Fact("email", m.group(0).casefold(), m.start(), m.end()))
    for m in scan(_URL):
        raw = m.group(0).rstrip(".,;:!?)")
        value = re.sub(r"^(?:https?://)?(?:www\.)?", "", raw.casefold()).rstrip("/")
        add(Fact("url", value, m.start(), m.start() + len(raw)))
    for _ in scan(_DATE):
        pass
    for _ in scan(_DOTTED_DATE):
        pass
    for m in scan(SPOKEN_DIGITS):
        digits = spoken_digits(m.group(0))
        if 7 <= len(digits) <= 15:
            add(Fact("phone", phone_digits(digits), m.start(), m.end()))
    for m in scan(MONEY):
        money = money_of(m)
        if money is not None:
            amount, currency = money
            add(Fact("money", f"{money_text(amount)} {currency}", m.start(), m.end()))
            # The other end of a range written with one currency: "80" in "80-120 €".
            # Only the range's neighbourhood, as masked so far: joining the whole text again
            # for every amount made a long KB quadratic (a 0.5 MB KB took 12 s).
            left = max(0, m.start() - RANGE_REACH - _LOOK_BEHIND)
            window = "".join(chars[left : m.end() + RANGE_REACH])
            for end in range_partners(window, m, offset=left):
                add(Fact("money", f"{money_text(end.amount)} {currency}", end.start, end.end))
                blank(end.start, end.end)
    # Lenient only, not masked: in a KB "8.30" may be a price or a time, so it supports both.
    for m in _BARE_DECIMAL.finditer(masked() if digits else ""):
        amount = parse_amount(m.group(0))
        if amount is not None:
            value = f"{money_text(amount)} {default_currency}"
            add(Fact("money", value, m.start(), m.end()), lenient_only=True)
    for m in scan(SPOKEN_MONEY):
        whole = spoken_number(m.group("n"))
        cents = spoken_number(m.group("cents")) if m.group("cents") else 0
        if whole is not None and cents is not None and cents < 100:
            amount = Decimal(whole) + Decimal(cents) / 100
            unit = m.group("unit").casefold()
            currency = SPOKEN_MINOR.get(unit) or SPOKEN_CURRENCY[unit[0]]
            add(Fact("money", f"{money_text(amount)} {currency}", m.start(), m.end()))
    for m in scan(SPOKEN_DURATION):
        number = spoken_number(m.group("n"))
        if number is not None:
            minutes = Decimal(number) * unit_minutes(m.group("unit"))
            add(Fact("duration", money_text(minutes), m.start(), m.end()))
    for m in scan(_PERCENT):
        amount = parse_amount(m.group(1))
        if amount is not None:
            add(Fact("percent", money_text(amount), m.start(), m.end()))
    for m in scan(COMPOUND_DURATION_RE):
        add(Fact("duration", compound_minutes(m), m.start(), m.end()))
    for m in scan(DURATION_RE):
        minutes = duration_minutes(m)
        if minutes is not None:
            add(Fact("duration", minutes, m.start(), m.end()))
    for m in scan(TIME_12H_RE):
        time = time_12h(m)
        if time is not None:
            add(Fact("time", time, m.start(), m.end()))
    for m in scan(TIME_RE):
        ambiguous = 1 <= int(m.group(1)) <= 12
        add(Fact("time", time_24h(m), m.start(), m.end(), ambiguous))
    for m in scan(PHONE_RE):
        raw = m.group(0)
        if not 7 <= len(re.sub(r"\D", "", raw)) <= 15:
            continue
        # A long number is a phone when it is dialled like one (+/0 prefix) or introduced as
        # one; "booking reference 12345678" is not. Support sources take every reading.
        dialled = raw[0] in "+0" or _PHONE_CUE.search(text[max(0, m.start() - 40) : m.start()])
        add(Fact("phone", phone_digits(raw), m.start(), m.end()), lenient_only=not dialled)
    return found


def time_variants(fact: Fact) -> set[str]:
    """'06:00' written without am/pm also stands for '18:00'."""
    variants = {fact.value}
    if fact.ambiguous_12h:
        hour, minute = fact.value.split(":")
        variants.add(time_value((int(hour) + 12) % 24, int(minute)))
    return variants


_OCR_UNIT = re.compile(r"\b(\d+)\s?rn(ins?|inutes?)\b")


def readable_text(text: str) -> str:
    """Text as a reader takes it: HTML entities decoded ("&euro;42/day") and a scanner's "rn"
    for "m" in a unit ("30 rninutes"). For reading values only: offsets differ from `text`."""
    return _OCR_UNIT.sub(r"\1 m\2", html.unescape(text))
