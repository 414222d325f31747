"""Compare intake field values by kind (phones by digits, dates by day, names by letters)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.facts import extract_facts, phone_digits, phones_match, time_variants
from judge.text import compact, find_literal, spaced

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})[./-](\d{1,2})(?:[./-](\d{2,4}))?\b"), "dmy"),
    (re.compile(rf"\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH}(?:,?\s+(\d{{4}}))?", re.I), "dMy"),
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}){_ORD}\b(?:,?\s+(\d{{4}}))?", re.I), "Mdy"),
]


@dataclass(frozen=True)
class DateMention:
    """A date in text; `readings` holds every (year|None, month, day) it may mean."""

    start: int
    end: int
    readings: frozenset[tuple[int | None, int, int]]


def _year(raw: str | None) -> int | None:
    if not raw:
        return None
    year = int(raw)
    return year + 2000 if year < 100 else year


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def find_dates(text: str) -> list[DateMention]:
    """Dates written as ISO, d/m(/y), d.m.y, '15 March', 'March 15th'; d/m also read as m/d."""
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            readings: set[tuple[int | None, int, int]] = set()
            if order == "ymd":
                readings.add((_year(m.group(1)), int(m.group(2)), int(m.group(3))))
            elif order == "dmy":
                if "." in m.group(0) and not m.group(3):
                    continue  # "8.30" is a time, not a date
                first, second, year = int(m.group(1)), int(m.group(2)), _year(m.group(3))
                readings.update({(year, second, first), (year, first, second)})
            elif order == "dMy":
                readings.add((_year(m.group(3)), _MONTHS[m.group(2).casefold()], int(m.group(1))))
            else:
                readings.add((_year(m.group(3)), _MONTHS[m.group(1).casefold()], int(m.group(2))))
            readings = {r for r in readings if _valid(r[1], r[2])}
            if readings:
                taken.append((m.start(), m.end()))
                found.append(DateMention(m.start(), m.end(), frozenset(readings)))
    return sorted(found, key=lambda d: d.start)


def _same_day(a: DateMention, b: DateMention) -> bool:
    for ya, ma, da in a.readings:
        for yb, mb, db in b.readings:
            if (ma, da) == (mb, db) and (ya is None or yb is None or ya == yb):
                return True
    return False


def values_match(kind: str, extracted: str, truth: str) -> bool:
    """Does an extracted value equal the ground truth, up to formatting for its kind?"""
    if kind == "phone":
        return phones_match(phone_digits(extracted), phone_digits(truth))
    if kind == "email":
        return extracted.strip().casefold() == truth.strip().casefold()
    if kind == "date":
        got, want = find_dates(extracted), find_dates(truth)
        if got and want:
            return _same_day(got[0], want[0])
    if kind == "time":
        got = [f for f in extract_facts(extracted) if f.kind == "time"]
        want = [f for f in extract_facts(truth) if f.kind == "time"]
        if got and want:
            return bool(time_variants(got[0]) & time_variants(want[0]))
    if compact(extracted) == compact(truth):
        return True
    if kind == "choice":
        # A choice may be extracted as its short or long label ("Hygiene clean" / "Hygiene clean (scale)").
        short, long = sorted((spaced(extracted), spaced(truth)), key=len)
        return len(short) >= 3 and f" {short} " in f" {long} "
    return False


def find_statement(kind: str, value: str, text: str) -> str | None:
    """The literal slice of `text` in which the customer states `value`, if they do."""
    if not value.strip():
        return None
    if kind == "phone":
        want = phone_digits(value)
        for fact in extract_facts(text):
            if fact.kind == "phone" and phones_match(fact.value, want):
                return text[fact.start : fact.end]
        return None
    if kind == "date":
        wanted = find_dates(value)
        if wanted:
            for mention in find_dates(text):
                if _same_day(mention, wanted[0]):
                    return text[mention.start : mention.end]
            return None
    if kind == "time":
        wanted = [f for f in extract_facts(value) if f.kind == "time"]
        if wanted:
            for fact in extract_facts(text):
                if fact.kind == "time" and time_variants(fact) & time_variants(wanted[0]):
                    return text[fact.start : fact.end]
            return None
    return find_literal(value, text)
