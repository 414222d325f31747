"""What the customer said, slot by slot (name, phone, email, party, days, dates, times,
codes, amounts, items chosen), the latest value of each kept; and what can be booked."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from generator.schemas import Manifest
from judge.customer_details.days import (
    calendar_dates,
    day_name,
    days_of_month,
    kept_values,
    role_days,
    weekdays_in,
)
from judge.customer_details.names import NAME, NAME_INTRO, NOT_NAMES, RELATIVE, people_named
from judge.customer_details.numbers import CODE, code_shape, party_counts, quantities
from judge.dialogue_acts import questions
from judge.facts import extract_facts, time_variants
from judge.schemas import CaseTranscript
from judge.text import split_sentences, words

# "Balayage from $180", "The Vault: 2 to 5 players, 60 min", "Single lesson (60 min): £38": the
# name before the price or duration of a KB entry is an item a customer can choose.
_ITEM = re.compile(
    r"^\s*[-*•]?\s*([A-Z0-9][\w'&/\- ]{1,40}?)\s*(?::|\s[-–—]\s|\(|\bfrom\b|[€$£]|\d)"
)
_NOT_ITEMS = frozenset(
    words(
        "hours opening address phone email contact location parking price prices cancellation "
        "policy booking bookings note notes tel web website area service services open closed "
        "mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday "
        "all total stylists staff team deposit fee fees minimum"
    )
)
_ENTRY = re.compile(r"\s[/|·]\s|;\s|,\s(?=[A-Z])|\n")


# Words that name nothing in an item's name: articles, possessives, copulas.
_NOT_NAMING = frozenset(
    words("the and for with our your their its this that these those are was were has have")
)


def _item_words(name: str) -> frozenset[str]:
    return frozenset(w for w in words(name) if len(w) > 2 and w not in _NOT_NAMING)


def catalog(case: CaseTranscript, manifest: Manifest) -> dict[str, frozenset[str]]:
    """What a customer can book, by name: the manifest's services and the KB's item lines."""
    names = [*(s.name for s in manifest.services), *_kb_items(case.fixture.text)]
    items = {name: _item_words(name) for name in names}
    return {name: w for name, w in items.items() if w}


@functools.lru_cache(maxsize=64)
def _kb_items(kb: str) -> tuple[str, ...]:
    """The names of the KB's priced or timed item lines, read once per KB."""
    names: list[str] = []
    for part in _ENTRY.split(kb):
        if not any(f.kind in ("money", "duration") for f in extract_facts(part)):
            continue
        # "Cuts: Women's cut $65" names a category and an item.
        for candidate in (part, part.partition(": ")[2]):
            m = _ITEM.match(candidate)
            # An item has a name: not a line that opens with a word of no item ("Hours: ..."),
            # nor one whose every word is ("The price is £15", "Total cost - £40").
            if (
                m
                and m.group(1).split()[0].casefold() not in _NOT_ITEMS
                and not _item_words(m.group(1)) <= _NOT_ITEMS
            ):
                names.append(m.group(1).strip())
    return tuple(names)


_MAX_SPAN = 160


def covering_span(text: str, parts: list[str]) -> str:
    """The verbatim span of `text` from the first of `parts` it contains to the last ("Friday
    or Saturday" for "Friday" and "Saturday"): a quote, never pieces joined. Parts too far
    apart give the first one alone."""
    found = [(at, at + len(part)) for part in parts if part and (at := text.find(part)) >= 0]
    if not found:
        return parts[0] if parts else ""
    start, end = min(a for a, _ in found), max(b for _, b in found)
    if end - start > _MAX_SPAN:
        start, end = found[0]
    return text[start:end]


def item_span(text: str, names: list[str], items: dict[str, frozenset[str]]) -> str:
    """Where `text` names the items `names` (a catalog's names, which the text need not spell
    as such: "the e-bike check" for "E-bike check"): the verbatim span covering each of their
    words' first use in it."""
    wanted = {w for name in names for w in items.get(name, frozenset())}
    spans = [
        m.span()
        for w in sorted(wanted)
        if (m := re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", text, re.IGNORECASE))
    ]
    if not spans:
        return names[0] if names else ""
    start, end = min(a for a, _ in spans), max(b for _, b in spans)
    if end - start > _MAX_SPAN:
        start, end = min(spans)
    # Whole words: "e-bike check", not "bike check" ("e" is too short to be an item word).
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "-'"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] in "-'"):
        end += 1
    return text[start:end].strip("-'")


def mentioned_items(text: str, items: dict[str, frozenset[str]]) -> list[str]:
    """Items all of whose words the text uses; a longer name wins over one it contains."""
    present = set(words(text))
    found = [name for name, w in items.items() if w <= present]
    return [n for n in found if not any(items[n] < items[o] for o in found)]


@dataclass
class Said:
    """The customer's latest value per slot, with the turn and verbatim text it came from."""

    values: dict[str, tuple[str, str, int]]

    def put(self, slot: str, value: str, quote: str, turn: int) -> None:
        self.values[slot] = (value, quote, turn)


def customer_slots(text: str, turn: int, said: Said, items: dict[str, frozenset[str]]) -> None:
    """Record in `said` the details the customer gives in `text` (their message of `turn`):
    name, phone, email, party size, days, dates, times, codes, amounts, items chosen."""
    for m in NAME.finditer(text):
        first = m.group(1).split()[0]
        if first.casefold() not in NOT_NAMES:
            said.put("name", first.casefold(), m.group(1), turn)
            if len(m.group(1).split()) > 1:
                said.put("surname", m.group(1).split()[-1].casefold(), m.group(1), turn)
    for m in RELATIVE.finditer(text):
        said.put("other_name", m.group(1).casefold(), m.group(1), turn)
    for person in people_named(text)[:1]:
        said.put("person", person.casefold(), person, turn)
    for fact in extract_facts(text):
        if fact.kind == "money":
            said.put(f"amount:{fact.value}", fact.value, text[fact.start : fact.end], turn)
    for m in CODE.finditer(text):
        said.put(f"code:{code_shape(m.group(0))}", m.group(0), m.group(0), turn)
    for slot, numbers in quantities(text).items():
        said.put(
            slot, "|".join(str(n) for n in sorted(numbers)), next(iter(numbers.values())), turn
        )
    party = party_counts(text)
    if party:
        [(size, quote)] = list(party.items())[:1]
        said.put("party", size, quote, turn)
    intro = NAME_INTRO.match(text)
    if intro:
        said.put("name", intro.group(1).split()[0].casefold(), intro.group(1), turn)
        said.put("surname", intro.group(1).split()[-1].casefold(), intro.group(1), turn)
    for fact in extract_facts(text):
        if fact.kind in ("phone", "email"):
            said.put(fact.kind, fact.value, text[fact.start : fact.end], turn)
        elif fact.kind == "time":
            said.put(
                "time", "|".join(sorted(time_variants(fact))), text[fact.start : fact.end], turn
            )
    # An item asked about ("is whitening covered?") is not an item chosen ("whitening please",
    # "can I book a whitening?").
    choosing = [
        (sentence.text, name)
        for sentence in split_sentences(text)
        if not any(not q.request for q in questions(sentence.text))
        for name in mentioned_items(sentence.text, items)
    ]
    if choosing:
        chosen = [name for _, name in choosing]
        # The customer's own words for their choice, from the sentence that makes it.
        first = choosing[0][0]
        quote = item_span(first, [n for s, n in choosing if s == first], items)
        said.put("item", "|".join(chosen), quote, turn)
    # Several days ("Friday 14th and Saturday 15th", "Tuesday or Wednesday") are held as a set:
    # the bot may restate any of them, not another one.
    for slot, found in (
        ("day", {day_name(m.group(1)): m.group(0) for m in weekdays_in(text)}),
        ("date", dict(calendar_dates(text))),
        ("day_of_month", dict(days_of_month(text))),
    ):
        kept = kept_values(found, text)
        if kept:
            said.put(slot, "|".join(sorted(kept)), covering_span(text, list(kept.values())), turn)
    # "friday the 14th" after "15th June": the day of month said last replaces the full date.
    for slot, other in (("date", "day_of_month"), ("day_of_month", "date")):
        held, stale = said.values.get(slot), said.values.get(other)
        if held and stale and held[2] == turn and stale[2] < turn:
            del said.values[other]
    # "party is saturday 14th. can i collect friday 13th?": the day of each event.
    for clause in re.split(r"(?<=[.!?;])\s+|,\s+", text):
        for role, day, quote in role_days(clause):
            said.put(f"{role} day", day, quote, turn)
