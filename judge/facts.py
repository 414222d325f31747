"""Find checkable facts (money, times, durations, percentages, phones, emails, URLs) in text."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from generator.dates import NUMBER_WORDS, SPOKEN_NUMBER, find_dates, spoken_number
from judge.arithmetic import follows

FACT_KINDS = ("money", "time", "duration", "percent", "phone", "email", "url")

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_TLDS = r"(?:com|ie|org|net|eu|de|fr|es|it|nl|io|uk|co\.uk|info|biz)"
_URL = re.compile(
    r"(?:https?://|www\.)[^\s<>()\"']+"
    rf"|(?<![\w@.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.{_TLDS}\b(?:/[^\s<>()\"']*)?",
    re.IGNORECASE,
)
# Dates are masked (never facts themselves) so "15.03.2026" is not read as a time or a phone.
_DATE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b"
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
# Thousands grouped by a comma, point or space ("1,200", "1.200", "1 305 SEK").
_NUM = (
    # Lakh grouping: "1,50,000" (one hundred and fifty thousand rupees).
    r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d{1,2})?(?![\d,])|"
    r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?"
    r"(?![\d.,]\d)|\d+(?:[.,]\d{1,2})?(?!\d)"
)
_CUR_SYMBOL = r"€|\$|£|¥|₹"
_CODES = (
    r"EUR|USD|GBP|CHF|SEK|NOK|DKK|ISK|PLN|CZK|HUF|RON|TRY|AUD|CAD|NZD|SGD|HKD|JPY|INR|ZAR|MXN|"
    r"BRL"
)
_MONEY = re.compile(
    # "R12.50", "R 5 000" (rand) and "Rs 450" (rupees) only with a capital R.
    rf"(?P<pre>{_CUR_SYMBOL}|\b(?:{_CODES}|Fr\.|kr\.?|(?-i:Rs)\.?|(?-i:R)(?=\s?\d(?:\d|[.,\s]\d)))(?![a-z]))"
    rf"\s?(?P<n1>{_NUM})"
    # A symbol after the amount is euro style ("45 €", "45€"); "18 £10" is 18 then £10.
    rf"|(?<![\d.,])(?P<n2>{_NUM})(?P<post>\s?€|[$£]|\s?(?:{_CODES}|euros?|dollars?|pounds?|"
    r"francs?|kronor|krona|kroner|krone|kr|zł|rand|rupees?|quid|bucks|pence|"
    r"p(?=\s+(?:per|a|an|each)\b)|p(?=/)|"
    r"cents?)\b)",
    re.IGNORECASE,
)
# Amounts said aloud (voice transcripts): "twelve pounds ninety nine", "about four weeks".
_SPOKEN_MONEY = re.compile(
    rf"\b(?P<n>{SPOKEN_NUMBER})\s+(?P<unit>pounds?|euros?|dollars?|francs?|quid|bucks|pence|"
    r"cents?)"
    rf"(?:\s+(?:and\s+)?(?P<cents>{SPOKEN_NUMBER})(?:\s+(?:pence|p|cents?))?)?\b",
    re.IGNORECASE,
)
# "8 years old", "a 5-year-old", "6 and 11 year olds", "over 2 years of age": an age, not a
# span.
_NOT_AN_AGE = r"(?![\s-]+(?:olds?|of age)\b)"
_SPOKEN_DURATION = re.compile(
    rf"\b(?P<n>{SPOKEN_NUMBER})\s+(?P<unit>minutes?|hours?|days?|weeks?|months?|years?)\b"
    + _NOT_AN_AGE,
    re.IGNORECASE,
)
_SPOKEN_CURRENCY = {"p": "GBP", "q": "GBP", "e": "EUR", "d": "USD", "b": "USD", "f": "CHF"}
# "fifty-five pence", "ninety cents": minor units, as `_CURRENCY_WORDS` reads "55p".
_SPOKEN_MINOR = {"pence": "GBX", "cent": "CENT", "cents": "CENT"}
_PRICE_O = re.compile(rf"(?:{_CUR_SYMBOL})\d{{1,4}}O+(?![A-Za-z])")
_BARE_DECIMAL = re.compile(r"(?<![\d.,])\d+[.,]\d{2}(?![\d])")
_PERCENT = re.compile(r"(?<![\d.,])(\d+(?:[.,]\d+)?)\s?(?:%|per ?cent\b)", re.IGNORECASE)
# "2 hours 20 minutes", "1h 50m", "1 hr 30": one span.
_COMPOUND_DURATION = re.compile(
    r"(?<![\d.,])(\d{1,2})\s?(?:hours?|hrs?|h)\s?(?:and\s)?(\d{1,2})\s?(?:minutes?|mins?|m)\b",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"(?<![\d.,])(\d+(?:[.,]\d+)?)(?:\+|\s?-?ish)?[\s-]?(?:(?:working|business|calendar|clear|full|"
    r"school|banking)[\s-])?(minutes?|mins?|hours?|hrs?|h(?=\b)(?![.:]\d)|days?|weeks?|"
    r"wks?|months?|years?|yrs?)\b"
    # "60 day-passes", "10 hour-blocks" count things; "a 2-hour-long class" is still a span.
    r"(?!-(?!long\b)[a-z])" + _NOT_AN_AGE,
    re.IGNORECASE,
)
_TIME_12H = re.compile(r"(?<![\d.,:])(\d{1,2})(?:[:.](\d{2}))?\s?([ap])\.?m\b\.?", re.IGNORECASE)
_TIME_24H = re.compile(r"(?<![\d.,:])([01]?\d|2[0-3])[:.]([0-5]\d)(?![\d]|[.,:]\d)")
# A number read out digit by digit (voice transcripts): "oh seven nine one two double four ...".
_DIGIT = {
    **{word: str(n) for word, n in NUMBER_WORDS.items() if n < 10},
    **dict.fromkeys(("oh", "o", "zero", "nought"), "0"),
}
_DIGIT_WORD = r"(?:(?:double|triple)\s+)?(?:" + "|".join(_DIGIT) + r")"
_SPOKEN_DIGITS = re.compile(rf"\b{_DIGIT_WORD}(?:[\s,-]+{_DIGIT_WORD}){{6,}}\b", re.IGNORECASE)
_PHONE_CUE = re.compile(r"\b(?:call|phone|tel|ring|mobile|whatsapp|text|contact|reach)", re.I)
# Not a reference code's digits ("LK-0937712", "INC-448210").
_PHONE = re.compile(r"(?<![\w+])(?<![A-Za-z]-)(?:\+|00)?\d[\d \t().-]{5,18}\d(?![\w])")

_CURRENCY_WORDS = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "fr.": "CHF",
    "franc": "CHF",
    "francs": "CHF",
    "¥": "JPY",
    "₹": "INR",
    "rs": "INR",
    "rs.": "INR",
    "rupee": "INR",
    "rupees": "INR",
    "r": "ZAR",
    "rand": "ZAR",
    "quid": "GBP",
    "bucks": "USD",
    "zł": "PLN",
    # "kr" is Swedish, Norwegian or Danish: one currency to the judge, so "120 kr" and "120 SEK"
    # from the same bot and KB agree.
    "kr": "KR",
    "kr.": "KR",
    "kronor": "KR",
    "krona": "KR",
    "kroner": "KR",
    "krone": "KR",
    "sek": "KR",
    "nok": "KR",
    "dkk": "KR",
    # Minor units are their own currency: "24.5p per kWh" is not £24.50.
    "p": "GBX",
    "pence": "GBX",
    "cent": "CENT",
    "cents": "CENT",
}


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


def parse_amount(raw: str) -> Decimal | None:
    """'1,200.50' / '1.200,50' / '80,00' / '80' -> Decimal; separators before 3 digits group."""
    parts = re.split(r"[.,]", re.sub(r"[ \u00a0\u202f]", "", raw))
    if len(parts) > 1 and len(parts[-1]) in (1, 2):
        number = "".join(parts[:-1]) + "." + parts[-1]
    else:
        number = "".join(parts)
    try:
        return Decimal(number)
    except InvalidOperation:
        return None


def money_text(amount: Decimal) -> str:
    """Canonical amount: 80.00 -> '80', 80.5 -> '80.50'."""
    if amount == amount.to_integral_value():
        return str(int(amount))
    return f"{amount.quantize(Decimal('0.01'))}"


def phone_digits(raw: str) -> str:
    """Digits only, without the international/trunk prefix zeros: '+353 1 555' -> '3531555'."""
    return re.sub(r"\D", "", raw).lstrip("0")


def phones_match(a: str, b: str) -> bool:
    """Same number, allowing a country code on one side (national '01 555 0142' vs '+353 1...')."""
    if len(a) < 7 or len(b) < 7:
        return a == b
    return a.endswith(b) or b.endswith(a)


def url_host(value: str) -> str:
    return value.split("/", 1)[0]


# Duration units by first letter, in minutes ("m" minutes is the default).
_MINUTES_PER = {"h": 60, "d": 60 * 24, "w": 60 * 24 * 7}
# A month is a twelfth of a year, so "12 months" and "1 year" are one span.
_MONTH = 60 * 24 * 30
_YEAR = 12 * _MONTH


_DAY_OF_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)


def days_of_month(text: str) -> set[tuple[int, int | None]]:
    """The days of the month a text names, with their month when it says one: "the 3rd" (3,
    None), "10 December" (10, 12), "December 10"."""
    dated = {(p.day, p.month) for p in find_dates(text) if p.day}
    named = {d for d, _ in dated}
    found = dated | {
        (int(m.group(1)), None)
        for m in _DAY_OF_MONTH.finditer(text)
        if int(m.group(1)) not in named
    }
    return {(d, m) for d, m in found if 1 <= d <= 31}


def day_spans(days: Iterable[tuple[int, int | None]]) -> set[int]:
    """Numbers of days (or nights) between two days of one month (a day without a month may be
    in any), counted with or without the last: the 3rd to the 10th is 7 days (or 8 counting
    both); 15 October and 29 January are no 14 days apart."""
    ordered = sorted(set(days), key=lambda d: d[0])
    return {
        b - a + extra
        for a, ma in ordered
        for b, mb in ordered
        if b > a and (ma is None or mb is None or ma == mb)
        for extra in (0, 1)
    }


def unit_minutes(unit: str) -> int:
    """Minutes in one `unit` ("min", "hrs", "day", "weeks", "month", "yr", ...)."""
    unit = unit.casefold()
    if unit.startswith("mo"):
        return _MONTH
    if unit.startswith("y"):
        return _YEAR
    return _MINUTES_PER.get(unit[0], 1)


def _mask(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        chars[i] = " "


def _time_value(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def extract_facts(text: str, *, default_currency: str = "EUR", lenient: bool = False) -> list[Fact]:
    """All facts in `text`, in order. `lenient` (for support sources) also reads bare '80.00'."""
    facts: list[Fact] = []

    # A scanned price list writes "£6O" for £60: read the letter O among a price's digits.
    chars = list(_PRICE_O.sub(lambda m: m.group(0).replace("O", "0"), text))

    def scan(pattern: re.Pattern[str]) -> Iterable[re.Match[str]]:
        for match in list(pattern.finditer("".join(chars))):
            _mask(chars, match.start(), match.end())
            yield match

    for m in scan(_EMAIL):
        facts.append(Fact("email", m.group(0).casefold(), m.start(), m.end()))
    for m in scan(_URL):
        raw = m.group(0).rstrip(".,;:!?)")
        value = re.sub(r"^(?:https?://)?(?:www\.)?", "", raw.casefold()).rstrip("/")
        facts.append(Fact("url", value, m.start(), m.start() + len(raw)))
    for _ in scan(_DATE):
        pass
    for _ in scan(_DOTTED_DATE):
        pass
    for m in scan(_SPOKEN_DIGITS):
        digits = spoken_digits(m.group(0))
        if 7 <= len(digits) <= 15:
            facts.append(Fact("phone", phone_digits(digits), m.start(), m.end()))
    for m in scan(_MONEY):
        amount = parse_amount(m.group("n1") or m.group("n2"))
        marker = (m.group("pre") or m.group("post")).strip().casefold()
        currency = _CURRENCY_WORDS.get(marker, marker.upper())
        if amount is not None:
            facts.append(Fact("money", f"{money_text(amount)} {currency}", m.start(), m.end()))
    if lenient:
        # Not masked: in a KB "8.30" may be a price or a time, so it supports both readings.
        for m in _BARE_DECIMAL.finditer("".join(chars)):
            amount = parse_amount(m.group(0))
            if amount is not None:
                value = f"{money_text(amount)} {default_currency}"
                facts.append(Fact("money", value, m.start(), m.end()))
    for m in scan(_SPOKEN_MONEY):
        whole = spoken_number(m.group("n"))
        cents = spoken_number(m.group("cents")) if m.group("cents") else 0
        if whole is not None and cents is not None and cents < 100:
            amount = Decimal(whole) + Decimal(cents) / 100
            unit = m.group("unit").casefold()
            currency = _SPOKEN_MINOR.get(unit) or _SPOKEN_CURRENCY[unit[0]]
            facts.append(Fact("money", f"{money_text(amount)} {currency}", m.start(), m.end()))
    for m in scan(_SPOKEN_DURATION):
        number = spoken_number(m.group("n"))
        if number is not None:
            minutes = Decimal(number) * unit_minutes(m.group("unit"))
            facts.append(Fact("duration", money_text(minutes), m.start(), m.end()))
    for m in scan(_PERCENT):
        amount = parse_amount(m.group(1))
        if amount is not None:
            facts.append(Fact("percent", money_text(amount), m.start(), m.end()))
    for m in scan(_COMPOUND_DURATION):
        minutes = int(m.group(1)) * 60 + int(m.group(2))
        facts.append(Fact("duration", str(minutes), m.start(), m.end()))
    for m in scan(_DURATION):
        amount = parse_amount(m.group(1))
        if amount is not None:
            minutes = amount * unit_minutes(m.group(2))
            facts.append(Fact("duration", money_text(minutes), m.start(), m.end()))
    for m in scan(_TIME_12H):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if 1 <= hour <= 12 and minute < 60:
            hour = hour % 12 + (12 if m.group(3).casefold() == "p" else 0)
            facts.append(Fact("time", _time_value(hour, minute), m.start(), m.end()))
    for m in scan(_TIME_24H):
        hour, minute = int(m.group(1)), int(m.group(2))
        ambiguous = 1 <= hour <= 12
        facts.append(Fact("time", _time_value(hour, minute), m.start(), m.end(), ambiguous))
    for m in scan(_PHONE):
        raw = m.group(0)
        if not 7 <= len(re.sub(r"\D", "", raw)) <= 15:
            continue
        # A long number is a phone when it is dialled like one (+/0 prefix) or introduced as
        # one; "booking reference 12345678" is not. Support sources take every reading.
        dialled = raw[0] in "+0" or _PHONE_CUE.search(text[max(0, m.start() - 40) : m.start()])
        if lenient or dialled:
            facts.append(Fact("phone", phone_digits(raw), m.start(), m.end()))
    return sorted(facts, key=lambda f: f.start)


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
        return {_time_value(hour % 12, minute), _time_value(hour % 12 + 12, minute)}
    return {_time_value(hour, minute)} if 13 <= hour <= 23 else set()


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


def time_variants(fact: Fact) -> set[str]:
    """'06:00' written without am/pm also stands for '18:00'."""
    variants = {fact.value}
    if fact.ambiguous_12h:
        hour, minute = fact.value.split(":")
        variants.add(_time_value((int(hour) + 12) % 24, int(minute)))
    return variants


_OCR_UNIT = re.compile(r"\b(\d+)\s?rn(ins?|inutes?)\b")


def readable_text(text: str) -> str:
    """Text as a reader takes it: HTML entities decoded ("&euro;42/day") and a scanner's "rn"
    for "m" in a unit ("30 rninutes"). For reading values only: offsets differ from `text`."""
    return _OCR_UNIT.sub(r"\1 m\2", html.unescape(text))


_SPANS = {
    "half an hour": "30",
    "an hour": "60",
    "a day": "1440",
    "a week": "10080",
    "one week": "10080",
    "a fortnight": "20160",
    "24/7": "1440",
    "round the clock": "1440",
    "around the clock": "1440",
}
# "4 meeting room hours", "10 free minutes": a count of a unit a few words on supports that
# duration.
_SPREAD_DURATION = re.compile(
    r"(?<![\d.,])(\d{1,3})\s+(?:[a-z][a-z-]*\s+){1,3}?(minutes|hours|days|weeks)\b", re.IGNORECASE
)
_SPAN_WORDS = re.compile(
    r"\b(" + "|".join(re.escape(span) for span in _SPANS) + r")(?![\w/])", re.IGNORECASE
)


@dataclass
class SupportIndex:
    """Every fact a reply may legitimately state, gathered from the KB, manifest and customer."""

    default_currency: str = "EUR"
    values: dict[str, set[str]] = field(default_factory=dict)

    def add_text(self, text: str) -> None:
        readable = readable_text(text)
        for fact in extract_facts(readable, default_currency=self.default_currency, lenient=True):
            self.add(fact)
        # "Mon-Fri 8-6" and "at 2" support the clock times they may mean.
        self.values.setdefault("time", set()).update(loose_hours(readable))
        for m in _SPREAD_DURATION.finditer(readable):
            minutes = int(m.group(1)) * unit_minutes(m.group(2))
            self.values.setdefault("duration", set()).add(str(minutes))
        # "a week", "half an hour": a span said in words.
        for m in _SPAN_WORDS.finditer(readable):
            self.add_value("duration", _SPANS[m.group(1).casefold()])

    def add(self, fact: Fact) -> None:
        bucket = self.values.setdefault(fact.kind, set())
        if fact.kind == "time":
            bucket.update(time_variants(fact))
        elif fact.kind == "url":
            bucket.add(url_host(fact.value))
        else:
            bucket.add(fact.value)

    def add_value(self, kind: str, value: str) -> None:
        self.values.setdefault(kind, set()).add(value)

    def supports(self, fact: Fact) -> bool:
        known = self.values.get(fact.kind, set())
        if fact.kind == "time":
            return bool(time_variants(fact) & known)
        if fact.kind == "phone":
            return any(phones_match(fact.value, other) for other in known)
        if fact.kind == "url":
            # Same site is enough: a deep link on the org's own domain is not a fabricated contact.
            return url_host(fact.value) in known
        return fact.value in known

    def derives(
        self,
        fact: Fact,
        counts: Iterable[int],
        shifts: Iterable[str] = (),
        stated: Iterable[str] = (),
        *,
        result: bool = False,
        listed: Iterable[str] = (),
        rates: Iterable[Decimal] = (),
        spans: Iterable[int] = (),
        day_spans: Iterable[int] = (),
    ) -> bool:
        """Whether `fact` is arithmetic on supported values, as a careful reader accepts
        (`judge.arithmetic.follows`): amounts from the supported ones the conversation states
        (`stated`, money values), with its `counts` and the supported or stated `rates`;
        `result` when the reply presents the figure as a result, `listed` the amounts the same
        reply lists before it. A time may be a supported time moved by a supported duration the
        conversation states (`shifts`: "check-in closes 45 min before" the 22:45 sailing ->
        "be there by 22:00"); a duration may be the span between two times the reply states
        (`spans`, minutes: "2pm-5pm (3 hours)"), for a result the sum or difference of two
        supported durations the conversation states or one of them times a count, or a number
        of days between two days of the month one message names (`day_spans`)."""
        if fact.kind == "money":
            amount, _, currency = fact.value.rpartition(" ")
            support = self.values.get("money", set())

            # Minor units count in the major one: "350 kWh x 24.50p = £85.75".
            minor = _MINOR_UNIT.get(currency)

            def amounts(values: Iterable[str]) -> list[Decimal]:
                found = set()
                for value in values:
                    number, _, unit = value.rpartition(" ")
                    if value not in support:
                        continue
                    if unit == currency:
                        found.add(_decimal(number))
                    elif unit == minor:
                        found.add(_decimal(number) / 100)
                return sorted(found)

            rates = {_decimal(p) for p in self.values.get("percent", ())} | set(rates)
            return follows(
                _decimal(amount),
                known=amounts(support)[:60],
                stated=amounts(stated)[:30],
                counts=counts,
                rates=rates,
                result=result,
                listed=amounts(listed),
            )
        if fact.kind == "time":
            supported = self.values.get("duration", set())
            minutes = {int(_decimal(v)) for v in shifts if v in supported}
            for known in self.values.get("time", ()):
                hour, minute = (int(x) for x in known.split(":"))
                base = hour * 60 + minute
                for shift in minutes:
                    for moved in (base - shift, base + shift):
                        if _time_value(moved // 60 % 24, moved % 60) in time_variants(fact):
                            return True
        if fact.kind == "duration":
            value = _decimal(fact.value)
            if value in {Decimal(span) for span in spans}:
                return True
            # "1-2 working days to ship and 3-5 to deliver, so within 7", "a full hour: the
            # last 15 minutes" (60 - 45), "4 weeks of 2 classes": stated spans combined.
            supported = self.values.get("duration", set())
            known = sorted({_decimal(v) for v in shifts if v in supported})
            if result and any(value in (a + b, abs(a - b)) for a in known for b in known):
                return True
            if result and any(value == a * n for a in known for n in counts):
                return True
            # "from the 3rd to the 10th: 7 days", "thurs 10th to sunday 13th, all four days".
            day = Decimal(_MINUTES_PER["d"])
            return value % day == 0 and int(value / day) in set(day_spans)
        return False

    def copy(self) -> SupportIndex:
        return SupportIndex(self.default_currency, {k: set(v) for k, v in self.values.items()})


_MINOR_UNIT = {"GBP": "GBX", "EUR": "CENT", "USD": "CENT"}


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        return Decimal(-1)


_QUANTITY = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:,\d{3})*|\d{1,5})\s?(?:kwh|kw|km|miles?|units?|litres?|liters?|gb|"
    r"mb|kg|sq ?ft|m2|m²|minutes?|mins?|hours?|days?|nights?|people|persons?|guests?|texts?|"
    r"sms|calls?|messages?|pages?|copies|items?|pieces?)\b",
    re.IGNORECASE,
)


def conversation_counts(text: str) -> set[int]:
    """Whole numbers 2-100 written in text (digits or words) outside any fact but a duration (a
    price, time or phone number is not a count): the multipliers a total may use ("4 days",
    "two tickets")."""
    chars = list(text)
    for fact in extract_facts(text):
        if fact.kind != "duration":  # "4 days" is a count of days
            _mask(chars, fact.start, fact.end)
    text = "".join(chars)
    found = {int(w) for w in re.findall(r"(?<![\d.,])\d{1,3}(?![\d.,]\d)", text)}
    found |= {NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.casefold()) if w in NUMBER_WORDS}
    found = {n for n in found if 2 <= n <= 100}
    # A larger quantity counts when its unit says it is one: "350 kWh", "1,200 miles".
    found |= {int(parse_amount(m.group(1)) or 0) for m in _QUANTITY.finditer(text)}
    return {n for n in found if n >= 2}


def canonical_subject(subject: str) -> str:
    """Normalize a finding subject: a single fact in any spelling -> 'kind:value'; else folded."""
    text = " ".join(subject.split())
    kind, _, rest = text.partition(":")
    body = rest.strip() if kind in FACT_KINDS else text
    facts = extract_facts(body)
    if len(facts) == 1 and not body[: facts[0].start].strip() and not body[facts[0].end :].strip():
        return facts[0].key
    return text.casefold()
