"""Checkable facts in text and what supports them: the reader (`judge.fact_reader`, on the shared
readers of `generator.facts`) re-exported, plus `SupportIndex` (every fact a reply may state),
days of the month and their spans, the counts a total may use, and canonical finding subjects."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from generator.dates import NUMBER_WORDS, find_dates
from generator.facts.clock import time_value
from generator.facts.duration import MINUTES_PER, unit_minutes
from generator.facts.money import money_text, parse_amount
from generator.facts.phone import phone_digits, phones_match
from judge.arithmetic import follows
from judge.fact_reader import (
    FACT_KINDS,
    Fact,
    extract_facts,
    mask,
    readable_text,
    time_variants,
    url_host,
)
from judge.spoken import loose_hours, spoken_digits

__all__ = [
    "FACT_KINDS",
    "Fact",
    "SupportIndex",
    "canonical_subject",
    "conversation_counts",
    "day_spans",
    "days_of_month",
    "extract_facts",
    "loose_hours",
    "money_text",
    "parse_amount",
    "phone_digits",
    "phones_match",
    "readable_text",
    "spoken_digits",
    "time_variants",
    "unit_minutes",
    "url_host",
]


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
                        if time_value(moved // 60 % 24, moved % 60) in time_variants(fact):
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
            day = Decimal(MINUTES_PER["d"])
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
            mask(chars, fact.start, fact.end)
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
