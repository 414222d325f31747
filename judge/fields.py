"""Compare intake field values by kind (phones by digits, dates by day, names by letters).

Dates and times are read as people say them (generator.dates, the parser the simulator and
the reference responder share): a relative date means one day on the conversation's reference
day (`Blueprint.reference_date`), "around 11" is 11:00.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from generator.dates import find_times, proposals, time_proposals
from judge.facts import extract_facts, phone_digits, phones_match, time_variants
from judge.text import compact, find_literal, spaced


@dataclass(frozen=True)
class DateMention:
    """A date in text; `readings` holds every (year|None, month, day) it may mean."""

    start: int
    end: int
    readings: frozenset[tuple[int | None, int, int]]


def find_dates(text: str, today: date | None = None) -> list[DateMention]:
    """Dates proposed in `text` (generator.dates): ISO, d/m(/y) (also read as m/d), '15 March',
    'March 15th', and, when `today` (the conversation's reference day) is known, relative days
    ('next Tuesday', 'tomorrow', 'Friday the 12th') as the one day they mean."""
    found: list[DateMention] = []
    for phrase in proposals(text):
        if phrase.absolute:
            readings = phrase.readings()
        else:
            day = phrase.resolve(today)
            readings = frozenset({(day.year, day.month, day.day)}) if day else frozenset()
        if readings:
            found.append(DateMention(phrase.start, phrase.end, readings))
    return found


def _same_day(a: DateMention, b: DateMention) -> bool:
    for ya, ma, da in a.readings:
        for yb, mb, db in b.readings:
            if (ma, da) == (mb, db) and (ya is None or yb is None or ya == yb):
                return True
    return False


def _times(text: str) -> set[str]:
    """Every 24-hour reading of the first clock time in `text`: as the fact finder reads it
    ("6:00" may be 06:00 or 18:00) and as people say it ("half nine", "around 11")."""
    facts = [f for f in extract_facts(text) if f.kind == "time"]
    if facts:
        return time_variants(facts[0])
    spoken = find_times(text)
    return {spoken[0].value} if spoken else set()


def values_match(kind: str, extracted: str, truth: str, today: date | None = None) -> bool:
    """Does an extracted value equal the ground truth, up to formatting for its kind? A
    relative date ("next Tuesday") means the day it names on `today`, the conversation's
    reference day; without one it matches nothing but itself."""
    if kind == "phone":
        return phones_match(phone_digits(extracted), phone_digits(truth))
    if kind == "email":
        return extracted.strip().casefold() == truth.strip().casefold()
    if kind == "date":
        got, want = find_dates(extracted, today), find_dates(truth, today)
        if got and want:
            return _same_day(got[0], want[0])
    if kind == "time":
        got_times, want_times = _times(extracted), _times(truth)
        if got_times and want_times:
            return bool(got_times & want_times)
    if compact(extracted) == compact(truth):
        return True
    if kind == "choice":
        # A choice may be extracted as its short or long label ("Hygiene clean" / "Hygiene clean (scale)").
        short, long = sorted((spaced(extracted), spaced(truth)), key=len)
        return len(short) >= 3 and f" {short} " in f" {long} "
    return False


def find_statement(kind: str, value: str, text: str, today: date | None = None) -> str | None:
    """The literal slice of `text` in which the customer states `value`, if they do, in any
    words: "next Tuesday" states the date it means on `today`, "half nine" states 09:30."""
    if not value.strip():
        return None
    if kind == "phone":
        want = phone_digits(value)
        for fact in extract_facts(text):
            if fact.kind == "phone" and phones_match(fact.value, want):
                return text[fact.start : fact.end]
        return None
    if kind == "date":
        wanted = find_dates(value, today)
        if wanted:
            for mention in find_dates(text, today):
                if _same_day(mention, wanted[0]):
                    return text[mention.start : mention.end]
            return None
    if kind == "time":
        wanted = [f for f in extract_facts(value) if f.kind == "time"]
        if wanted:
            for fact in extract_facts(text):
                if fact.kind == "time" and time_variants(fact) & time_variants(wanted[0]):
                    return text[fact.start : fact.end]
            values = {p.value for p in find_times(value)}
            for phrase in time_proposals(text):
                if phrase.value in values:
                    return text[phrase.start : phrase.end]
            return None
    return find_literal(value, text)
