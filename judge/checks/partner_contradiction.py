"""Check: a reply that contradicts what the customer said earlier (name, phone, email, day,
date, time)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal

from generator.dates import (
    MONTH_NAMES,
    NUMBER_WORDS,
    SPOKEN_DAY,
    SPOKEN_NUMBER,
    SPOKEN_ORDINAL,
    ordinal_number,
    spoken_number,
)
from generator.schemas import Manifest
from judge.arithmetic import RESULT
from judge.checks.base import Check
from judge.dialogue_acts import questions, stem
from judge.facts import extract_facts, loose_hours, phone_digits, time_variants
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import ANY_WEEKDAY, Sentence, sentence_at, split_sentences, words

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# A weekday ("saturdays" too) that is not the far end of a range ("Monday to Friday" names
# opening days, not the customer's day).
_DAY = re.compile(
    rf"(?<![–—-])(?<![–—-] )(\b{ANY_WEEKDAY})(?!\s?(?:[–—-]|to|till|until|through)\s?{ANY_WEEKDAY})",
    re.IGNORECASE,
)
# "Monday to Friday", "mon till thurs": the day before a weekday that ends a range.
_RANGE_START = re.compile(
    rf"\b{ANY_WEEKDAY}\W{{0,2}}\s*(?:to|till|until|through|thru)\s+$", re.IGNORECASE
)


def _days(text: str) -> list[re.Match[str]]:
    """The weekdays of `text` that are not the far end of a range ("moved to Friday" names a
    day, "Monday to Friday" opening days)."""
    return [m for m in _DAY.finditer(text) if not _RANGE_START.search(text[: m.start()])]


_MONTHS = tuple(name[:3].casefold() for name in MONTH_NAMES)
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_ORDINAL = re.compile(
    rf"\b(?:the\s+)?(\d{{1,2}}(?:st|nd|rd|th)|(?<=the ){SPOKEN_DAY})\b"
    rf"(?!\s+(?:of\s+)?{_MONTH})",
    re.I,
)
# "14th March", "March 14", "2026-03-14", and said aloud "fourteenth of march", "march the
# fourteenth".
_DATE = re.compile(
    rf"\b(\d{{1,2}}(?:st|nd|rd|th)?|{SPOKEN_ORDINAL}(?=\s+of\b))(?:\s+of)?\s+{_MONTH}"
    rf"|\b{_MONTH}\s+(?:the\s+)?(\d{{1,2}}(?:st|nd|rd|th)?|{SPOKEN_ORDINAL})\b"
    r"|\b\d{4}-(\d{2})-(\d{2})\b",
    re.IGNORECASE,
)
_NAME = re.compile(
    r"\b(?i:my name is|my name's|name is|name's|names|name:|i am|i'm|im|this is|it's|its|"
    r"call me)\s+"
    r"([A-Z][a-zA-Z'\-]+(?:\s+[A-Z][a-zA-Z'\-]+)?)"
)
_NAME_INTRO = re.compile(
    r"^\s*(?:it's\s+|its\s+)?([A-Z][a-z'\-]+\s+[A-Z][a-zA-Z'\-]+)\s*[,.!]?\s*$"
)
# Where a bot addresses or restates the customer: "Thanks, Mary", "Dear Mr Byrne", "for Mary".
_ADDRESS = re.compile(
    r"\b(?i:thanks|thank you|hi|hello|hey|dear|great|perfect|lovely|welcome|sorry|noted|ok|"
    r"okay|got it),?\s+([A-Z][a-zA-Z'\-]+)\b"
    # A name used to address someone ends the phrase: "Thanks, Mary!", "Hi Mary, ...".
    r"(?=\s*(?:[,.!?;:—–]|-\s|$)|\s+for\b)"
)
# A restating sentence may also say other things: "We're closed on Sunday; Saturday is booked."
_CLAUSE = re.compile(
    r"[;,:]\s+|\s+[—–-]\s+|\s+(?:but|and|although|while|whereas)\s+", re.IGNORECASE
)
# A clause with a verb of its own says something new; one without ("Booked: Semi-private,
# Tuesday 18:00", "for the Garden Room, Saturday 15th and Sunday 16th") continues the last.
_OWN_VERB = re.compile(
    r"\b(?:is|are|was|were|be|'s|'re|isn't|aren't|open|opens|close|closes|closed|work|works|"
    r"have|has|do|does|don't|can|can't|will|won't|would|could|should|must|need|needs|runs?|"
    r"starts?|ends?|fits?|suits?|we|i|you|they|it)\b",
    re.IGNORECASE,
)
# A sentence that restates the booking: a day or time there is the customer's, not the hours.
_RESTATES = re.compile(
    r"\b(?:book|booked|booking|reserv|schedul|confirm|appointment|see you|you said|you mentioned|"
    r"you asked|your (?:visit|slot|appointment|booking|reservation|request|table|session|class|"
    r"move|order|delivery|trip|stay|event|party|collection|install|installation|lesson|course)|"
    r"pencil|noted|(?:i'll|i will|i've|let me) note|put (?:you|u) down|passed on|request|"
    r"for you on|"
    r"lined up|set for|all set|arriv|collecting|collection on\b|pick(?:ing)? (?:it )?up on|"
    r"so that's|that's a|to confirm|just to confirm|summary|submitted|logged|registered|"
    r"updated|changed|moved|for your (?:trip|stay|visit|day|journey|order)|"
    # A read-back: "I have you down for ...", "thank you, I have the fourteenth of May".
    r"(?:have|got) you down|\bi have (?:the|your)\b"
    rf"|your {ANY_WEEKDAY}"
    # A slot read back as a day and a time: "Wax & tint combo, Saturday 12pm."
    # (Not hours: "Sat 9am-5pm", "Monday-Friday 7am-1pm".)
    rf"|(?<![–—-])(?<![–—-] )(?<!to ){ANY_WEEKDAY},?\s+(?:at\s+)?\d{{1,2}}(?:[:.]\d{{2}})?\s*"
    r"(?:am|pm)\b(?!\s*(?:[–—-]|to|till|until)\s*\d))",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    [
        "i",
        "im",
        "i'm",
        "it",
        "its",
        "looking",
        "calling",
        "here",
        "interested",
        "new",
        "sorry",
        "just",
        "available",
        "free",
        "booked",
        "back",
        "hoping",
        "trying",
        "wondering",
        "a",
        "the",
        "not",
        "so",
        "very",
        "in",
        "on",
        "at",
        # Capitalized at the start of a sentence, never a name: "What's your name?"
        "what",
        "that",
        "there",
        "here",
        "who",
        "where",
        "when",
        "today",
        "tomorrow",
        "everyone",
        "everything",
        "let",
        "one",
    ]
)


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


def _item_words(name: str) -> frozenset[str]:
    return frozenset(
        w for w in words(name) if len(w) > 2 and w not in {"the", "and", "for", "with"}
    )


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
            if m and m.group(1).split()[0].casefold() not in _NOT_ITEMS:
                names.append(m.group(1).strip())
    return tuple(names)


def _mentioned(text: str, items: dict[str, frozenset[str]]) -> list[str]:
    """Items all of whose words the text uses; a longer name wins over one it contains."""
    present = set(words(text))
    found = [name for name, w in items.items() if w <= present]
    return [n for n in found if not any(items[n] < items[o] for o in found)]


_COUNT = r"(\d{1,3}|" + "|".join(NUMBER_WORDS) + r")"
# How many people: "5 adults", "group of 5", "table for four", "10 ppl".
_PARTY = re.compile(
    rf"\b{_COUNT}\s+(?:people|persons?|players?|guests?|of us|pax|ppl|participants?|attendees?|"
    rf"diners?|riders?)\b|\b(?:group|party|team|table) (?:of|for) {_COUNT}\b",
    re.IGNORECASE,
)
# Someone the customer names besides themselves: "my daughter Isla", "our dog Biscuit".
_RELATIVE = re.compile(
    r"\b(?i:my|our)\s+(?i:daughter|son|wife|husband|partner|mum|mom|dad|father|mother|friend|"
    r"boy|girl|kid|child|baby|dog|cat|puppy|pet|horse|colleague|boss|sister|brother)\s+"
    r"([A-Z][a-z'\-]+)"
)
# The bot naming someone in a restatement: "for Ella's lessons", "booked under Sam".
_NAMED = re.compile(
    r"\b(?:for|under|with|named|called)\s+([A-Z][a-z\-]+)(?:'s)?\b|\b([A-Z][a-z\-]+)'s\b"
)
# Part of the party: "2 adults", "our two kids" (others may come too: "me, my wife and our two
# kids" is four).
_SUBGROUP = re.compile(
    rf"\b{_COUNT}\s+(?:adults?|kids?|children|child|teens?|students?|seniors?)\b", re.IGNORECASE
)


def restating_clauses(sentence: str) -> list[str]:
    """The clauses of a sentence that restate the booking: those with a restating word and the
    verbless ones that continue them."""
    out: list[str] = []
    carrying = False
    for clause in _CLAUSE.split(sentence):
        carrying = bool(_RESTATES.search(clause)) or (carrying and not _OWN_VERB.search(clause))
        if carrying:
            out.append(clause)
    return out


# The person the customer asks to see: "a skin fade with Kemal", "can I see Dr Patel".
_WITH = re.compile(r"\b(?:with|see)\s+(?:(?:Dr|Dr\.|Mr|Mrs|Ms|Miss)\s+)?([A-Z][a-z'\-]+)\b")


def _people(text: str) -> list[str]:
    """Capitalized names after "with"/"see" in text, days, months and common words aside."""
    return [
        m.group(1)
        for m in _WITH.finditer(text)
        if m.group(1).casefold() not in _NOT_NAMES
        and _DAY.fullmatch(m.group(1)) is None
        and m.group(1)[:3].casefold() not in _MONTHS
    ]


# Everyone listed: "me, my wife and our 15 yo" is three.
_MEMBER = (
    r"(?:me|myself|(?:my|our) (?:\w+ )?(?:wife|husband|partner|son|daughter|mum|mom|dad|mother|"
    r"father|friend|brother|sister|boyfriend|girlfriend|fianc[eé]e?|baby|youngest|eldest|oldest|"
    r"\d{1,2} ?(?:yo|y/o|year old|year-old)))"
)
_LISTED = re.compile(
    rf"\b{_MEMBER}(?:\s*,\s*{_MEMBER})*,?\s+(?:and|&|\+)\s+{_MEMBER}\b", re.IGNORECASE
)


def _number(raw: str) -> int:
    return NUMBER_WORDS.get(raw.casefold()) or int(raw)


def _counts(text: str) -> dict[str, str]:
    """The party size stated in text (value -> verbatim): a whole-party count ("6 people",
    "table for four"), else the sum of its parts ("2 adults and 2 kids" -> 4) marked "+" as a
    lower bound."""
    found = {str(_number(m.group(1) or m.group(2))): m.group(0) for m in _PARTY.finditer(text)}
    if found:
        return found
    listed = _LISTED.search(text)
    if listed:
        count = len(re.findall(_MEMBER, listed.group(0), re.IGNORECASE))
        return {str(count): listed.group(0)}
    parts = [(_number(m.group(1)), m.group(0)) for m in _SUBGROUP.finditer(text)]
    if parts:
        return {f"{sum(n for n, _ in parts)}+": parts[0][1]}
    return {}


def _party_conflict(held: str, stated: dict[str, str]) -> str | None:
    """The stated count that contradicts the held one: another whole-party size, or fewer
    people than the parts the customer named."""
    for value, quote in stated.items():
        count = int(value.rstrip("+"))
        if held.endswith("+"):
            if count < int(held[:-1]):
                return quote
        elif not value.endswith("+") and value != held:
            return quote
    return None


# Quantities the customer gives with their noun ("40 pallets", "fourteen boxes") and numbered
# places ("flat fourteen", "unit 7"): read back with another number, they are contradicted.
_QUANTITY = re.compile(
    # ("the first three items", "over 80 guests": a part or a threshold, not their count.)
    r"(?<!first )(?<!next )(?<!last )(?<!over )(?<!under )(?<!than )(?<!least )(?<!extra )"
    rf"(?<![\d.,])\b(\d{{1,4}}|{SPOKEN_NUMBER})\s+([a-z]{{4,}})\b",
    re.IGNORECASE,
)
_PLACE = re.compile(
    rf"\b(flat|unit|room|apartment|apt|gate|platform|seat|pitch|plot|locker|bay|pallet|year|"
    rf"grade|stage|size|row|aisle|level|house|number|no\.?)\s+"
    rf"(?:no\.?\s*|number\s+)?(\d{{1,4}}|{SPOKEN_NUMBER})\b",
    re.IGNORECASE,
)
# A strength, size or weight the customer names: "Vetmedin 5mg", "a 2.5kg bag" (kept in
# thousandths, so 1.25mg is 1250).
_MEASURE = re.compile(
    r"(?<![\d.,])(\d{1,4}(?:[.,]\d{1,3})?)\s?(mg|mcg|ml|kg|cl|cm|mm|gb|tb|kw|kwh|mah)\b",
    re.IGNORECASE,
)
# Spans and prices are the business's to state; people are the party slot's.
_NOT_QUANTITIES = frozenset(
    stem(w)
    for w in words(
        "minutes hours days weeks months years working business seconds pounds euros dollars "
        "pence cents percent times people persons players guests adults children kids riders "
        "diners participants attendees more less extra each other left only about"
    )
) | frozenset(stem(name.casefold()) for name in (*MONTH_NAMES, *_DAYS))


_WORKED_OUT = re.compile(
    r"\b(?:brings? (?:it|that|the total) to|makes? (?:it|that)|comes? to|in total|total of|"
    r"altogether|adds? up to)\b",
    re.IGNORECASE,
)


def _amount(raw: str) -> int | None:
    return int(raw) if raw.isdigit() else spoken_number(raw)


def quantities(text: str) -> dict[str, dict[int, str]]:
    """Slot ("count:<noun>", "place:<kind>" or "measure:<unit>") -> number -> verbatim, for the
    quantities, numbered places and measures `text` states ("from 2 twins to 1 triple + 1
    twin": twins 1 or 2)."""
    found: dict[str, dict[int, str]] = {}

    def add(slot: str, number: int | None, quote: str) -> None:
        if number is not None:
            found.setdefault(slot, {}).setdefault(number, quote)

    for m in _QUANTITY.finditer(text):
        noun = stem(m.group(2).casefold())
        if noun not in _NOT_QUANTITIES and noun not in _NOT_NAMES:
            add(f"count:{noun}", _amount(m.group(1)), m.group(0))
    for m in _PLACE.finditer(text):
        kind = m.group(1).casefold().rstrip(".")
        add(
            f"place:{'number' if kind in ('no', 'house') else kind}",
            _amount(m.group(2)),
            m.group(0),
        )
    for m in _MEASURE.finditer(text):
        value = Decimal(m.group(1).replace(",", "."))
        add(f"measure:{m.group(2).casefold()}", int(value * 1000), m.group(0))
    return found


@functools.lru_cache(maxsize=64)
def _kb_quantities(kb: str) -> dict[str, dict[int, str]]:
    """The KB's own quantities, read once per KB (not per turn)."""
    return quantities(kb)


def _numbers_said(text: str) -> set[int]:
    """Every whole number `text` says, in digits or words ("actually make it 4")."""
    found = {int(n) for n in re.findall(r"(?<![\d.,])\d{1,4}(?![\d])", text)}
    found |= {n for m in re.finditer(SPOKEN_NUMBER, text, re.I) if (n := spoken_number(m.group(0)))}
    return found


# Reference codes the customer gives: "VM-20931", "BE-7720145", "MM-55120-K".
_CODE = re.compile(r"\b[A-Z]{1,4}[-/]?\d{3,}(?:[-/][A-Z0-9]+)?\b")


@dataclass
class Said:
    """The customer's latest value per slot, with the turn and verbatim text it came from."""

    values: dict[str, tuple[str, str, int]]

    def put(self, slot: str, value: str, quote: str, turn: int) -> None:
        self.values[slot] = (value, quote, turn)


def _day(token: str) -> str:
    prefix = token[:3].casefold()
    return next(d for d in _DAYS if d.startswith(prefix))


def _dates(text: str) -> list[tuple[str, str]]:
    """(canonical month-day, verbatim) of the calendar dates in text."""
    found: list[tuple[str, str]] = []
    for m in _DATE.finditer(text):
        if m.group(5):
            month, day = int(m.group(5)), int(m.group(6))
        else:
            day = ordinal_number(m.group(1) or m.group(4)) or 0
            month = _MONTHS.index((m.group(2) or m.group(3))[:3].casefold()) + 1
        if 1 <= day <= 31 and 1 <= month <= 12:
            found.append((f"{month:02d}-{day:02d}", m.group(0)))
    return found


def _days_of_month(text: str) -> list[tuple[str, str]]:
    """(day number, verbatim) of "the 14th" written without a month."""
    return [(str(ordinal_number(m.group(1))), m.group(0)) for m in _ORDINAL.finditer(text)]


# "not the 17th, make it the 10th": the negated value is the one being withdrawn.
_WITHDRAWN = re.compile(
    r"\b(?:not|no longer|instead of|rather than|wasn't|isn't)\s+(?:on\s+|the\s+)?$", re.I
)


def _kept(found: dict[str, str], text: str) -> dict[str, str]:
    """The values of `found` (value -> verbatim) that the text does not withdraw."""
    kept = {}
    for value, quote in found.items():
        at = text.find(quote)
        if at >= 0 and _WITHDRAWN.search(text[max(0, at - 20) : at]):
            continue
        kept[value] = quote
    return kept


@functools.lru_cache(maxsize=64)
def _kb_values(kb: str) -> tuple[frozenset[str], frozenset[str]]:
    """The clock times and amounts the KB states, read once per KB (not per turn)."""
    facts = extract_facts(kb)
    times = frozenset(f.value for f in facts if f.kind == "time") | loose_hours(kb)
    money = frozenset(f.value for f in facts if f.kind == "money")
    return times, money


def _code_shape(code: str) -> str:
    """Letters kept, digits as '9': codes of one shape are the same kind of reference."""
    return re.sub(r"\d", "9", code)


def customer_slots(text: str, turn: int, said: Said, items: dict[str, frozenset[str]]) -> None:
    """Record in `said` the details the customer gives in `text` (their message of `turn`):
    name, phone, email, party size, days, dates, times, codes, amounts, items chosen."""
    for m in _NAME.finditer(text):
        first = m.group(1).split()[0]
        if first.casefold() not in _NOT_NAMES:
            said.put("name", first.casefold(), m.group(1), turn)
            if len(m.group(1).split()) > 1:
                said.put("surname", m.group(1).split()[-1].casefold(), m.group(1), turn)
    for m in _RELATIVE.finditer(text):
        said.put("other_name", m.group(1).casefold(), m.group(1), turn)
    for person in _people(text)[:1]:
        said.put("person", person.casefold(), person, turn)
    for fact in extract_facts(text):
        if fact.kind == "money":
            said.put(f"amount:{fact.value}", fact.value, text[fact.start : fact.end], turn)
    for m in _CODE.finditer(text):
        said.put(f"code:{_code_shape(m.group(0))}", m.group(0), m.group(0), turn)
    for slot, numbers in quantities(text).items():
        said.put(
            slot, "|".join(str(n) for n in sorted(numbers)), next(iter(numbers.values())), turn
        )
    party = _counts(text)
    if party:
        [(size, quote)] = list(party.items())[:1]
        said.put("party", size, quote, turn)
    intro = _NAME_INTRO.match(text)
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
    chosen = [
        name
        for sentence in split_sentences(text)
        if not any(not q.request for q in questions(sentence.text))
        for name in _mentioned(sentence.text, items)
    ]
    if chosen:
        said.put("item", "|".join(chosen), ", ".join(chosen), turn)
    # Several days ("Friday 14th and Saturday 15th", "Tuesday or Wednesday") are held as a set:
    # the bot may restate any of them, not another one.
    for slot, found in (
        ("day", {_day(m.group(1)): m.group(0) for m in _days(text)}),
        ("date", dict(_dates(text))),
        ("day_of_month", dict(_days_of_month(text))),
    ):
        kept = _kept(found, text)
        if kept:
            said.put(slot, "|".join(sorted(kept)), ", ".join(kept.values()), turn)
    # "friday the 14th" after "15th June": the day of month said last replaces the full date.
    for slot, other in (("date", "day_of_month"), ("day_of_month", "date")):
        held, stale = said.values.get(slot), said.values.get(other)
        if held and stale and held[2] == turn and stale[2] < turn:
            del said.values[other]
    # "party is saturday 14th. can i collect friday 13th?": the day of each event.
    for clause in re.split(r"(?<=[.!?;])\s+|,\s+", text):
        for role, day, quote in _role_days(clause):
            said.put(f"{role} day", day, quote, turn)


# What a day is for: the customer arriving, leaving, collecting or having something delivered.
_ROLES = {
    "arrival": re.compile(r"\b(?:arriv\w*|check(?:ing)?[- ]in|coming)\b", re.I),
    "departure": re.compile(r"\b(?:leav\w*|depart\w*|check(?:ing)?[- ]out)\b", re.I),
    "collection": re.compile(r"\b(?:collect\w*|pick(?:ing)?[- ]?(?:it |them )?up)\b", re.I),
    "delivery": re.compile(r"\bdeliver\w*", re.I),
}


def _role_days(clause: str) -> list[tuple[str, str, str]]:
    """(role, weekday, verbatim) when a clause names exactly one role and one weekday."""
    roles = [r for r, pattern in _ROLES.items() if pattern.search(clause)]
    days = {_day(m.group(1)): m.group(0) for m in _days(clause)}
    kept = _kept(days, clause)
    if len(roles) != 1 or len(kept) != 1:
        return []
    [(day, quote)] = kept.items()
    return [(roles[0], day, quote)]


_HOURS_WORD = re.compile(
    r"\b(?:open|opens|opening|close|closes|closing|closed|until|till|from|hours|last (?:entry|"
    r"admission|orders?|wash|booking)|check-?in|check-?out|departs?|departure|sailing)\b",
    re.IGNORECASE,
)
_RANGE_JOIN = re.compile(r"\d\s?(?:[–—-]|to|till|until)\s?$", re.IGNORECASE)


def _range_end(text: str, start: int) -> bool:
    """The value at `start` closes a range ("18:00-19:30", "2-6 August")."""
    return bool(_RANGE_JOIN.search(text[max(0, start - 12) : start]))


def _ends_range(clause: str, quote: str) -> bool:
    at = clause.find(quote)
    return at >= 0 and _range_end(clause, at)


# Numbers and codes a customer gives: an account or order number, a booking code, a phone, an
# amount ("$540k", "12,000"). Five or more characters, so a date or a time is never one.
_FIGURE_TOKEN = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:[, ]\d{3})+|\d+(?:[.,]\d+)?\s?k|\d[\d ]{3,}\d|(?=[A-Z]*\d)[A-Z\d]{5,})"
    r"(?![\w.,]\w)"
)


def _figure_tokens(text: str) -> dict[str, str]:
    """Normalized figure or code -> verbatim: digits only ("$540k" -> "540000")."""
    found: dict[str, str] = {}
    for m in _FIGURE_TOKEN.finditer(text):
        raw = m.group(1)
        if raw.rstrip().endswith("k") and raw[0].isdigit():
            number = raw.rstrip("k ").replace(",", ".")
            try:
                key = str(int(float(number) * 1000))
            except ValueError:
                continue
        else:
            key = re.sub(r"[ ,]", "", raw)
        if len(key) >= 5:
            found[key] = raw
    return found


def _transposed(
    reply: str, sentences: list[Sentence], kb: str, customer: str
) -> list[tuple[str, str, str]]:
    """A number or code the customer gave, read back with its characters transposed
    ("40017723" -> "40071723", "HX7QPL" -> "HX7PQL", "$540k" -> "$450,000")."""
    theirs = _figure_tokens(customer)
    known = set(theirs) | set(_figure_tokens(kb))
    out: list[tuple[str, str, str]] = []
    for key, raw in _figure_tokens(reply).items():
        if key in known:
            continue
        for their_key, their_raw in theirs.items():
            if len(key) == len(their_key) and sorted(key) == sorted(their_key):
                at = reply.find(raw)
                sentence = sentence_at(sentences, at) if at >= 0 else None
                out.append((f"number {their_raw}", raw, sentence.text if sentence else reply))
                break
    return out


def _conflicts(
    reply: str, said: Said, kb: str, customer: str, items: dict[str, frozenset[str]]
) -> list[tuple[str, str, str]]:
    """(slot, what the reply says, sentence) for each restated value that differs."""
    out: list[tuple[str, str, str]] = []
    sentences = split_sentences(reply)
    name = said.values.get("name")
    surname = said.values.get("surname")
    if name and surname:
        # "Thanks, Siobhan Kelleher" for Siobhan Kelly: the first name right, the surname not.
        full = re.compile(rf"\b{re.escape(name[1].split()[0])}\s+([A-Z][a-zA-Z'\-]+)")
        for m in full.finditer(reply):
            if m.group(1).casefold() != surname[0] and m.group(1).casefold() not in _NOT_NAMES:
                sentence = sentence_at(sentences, m.start(1))
                out.append(("surname", m.group(1), sentence.text if sentence else reply))
    if name:
        for m in _ADDRESS.finditer(reply):
            word = m.group(1)
            if word.casefold() in _NOT_NAMES or word.casefold() == name[0]:
                continue
            if word.casefold() in f"{kb}\n{customer}".casefold() or word.casefold() in _DAYS:
                continue
            if word[0].isupper() and len(word) > 2 and not word.isupper():
                sentence = sentence_at(sentences, m.start(1))
                out.append(("name", word, sentence.text if sentence else reply))
    kb_times, kb_money = _kb_values(kb)
    for fact in extract_facts(reply):
        if fact.kind not in ("phone", "email", "time") or fact.kind not in said.values:
            continue
        value, _, _ = said.values[fact.kind]
        sentence = sentence_at(sentences, fact.start)
        text = sentence.text if sentence else reply
        if fact.kind == "time":
            if _range_end(reply, fact.start):
                continue  # "18:00-19:30" for the customer's 6pm: the slot's end
            restating = restating_clauses(text)
            # "9-10am" then "the 10-11 slot": a loosely named hour the customer said counts;
            # "6:30" said without am/pm is also 18:30.
            if not any(reply[fact.start : fact.end] in c for c in restating):
                continue
            if time_variants(fact) & (set(value.split("|")) | loose_hours(customer)):
                continue
            # A business time from the KB ("we close at 18:00") is no restatement; a KB slot
            # booked instead of the customer's time is.
            if time_variants(fact) & kb_times and _HOURS_WORD.search(text):
                continue
            # "Journey time is 1h 50m, so arrival is around 19:20": worked out, not restated.
            if RESULT.search(text[: fact.start - (sentence.start if sentence else 0)]) and any(
                f.kind == "duration" for f in extract_facts(text)
            ):
                continue
        if fact.kind == "phone":
            # The same number in another format, or a business number from the KB.
            digits = phone_digits(fact.value)
            if digits[-7:] == phone_digits(value)[-7:] or digits in phone_digits(kb):
                continue
        elif fact.value == value or reply[fact.start : fact.end] in kb:
            continue
        out.append((fact.kind, reply[fact.start : fact.end], text))
    amounts = [v for slot, v in said.values.items() if slot.startswith("amount:")]
    for fact in extract_facts(reply):
        if (
            fact.kind != "money"
            or fact.value in kb_money
            or any(fact.value == a[0] for a in amounts)
        ):
            continue
        # "$1,430" for the customer's "$1,340": their own figure with its digits swapped.
        digits = re.sub(r"\D", "", fact.value)
        for value, _quote, _ in amounts:
            theirs = re.sub(r"\D", "", value)
            if len(digits) >= 3 and sorted(digits) == sorted(theirs):
                sentence = sentence_at(sentences, fact.start)
                out.append(
                    (
                        f"amount:{value}",
                        reply[fact.start : fact.end],
                        sentence.text if sentence else reply,
                    )
                )
                break
    out += _transposed(reply, sentences, kb, customer)
    # A quantity read back with a number the customer never said ("40 pallets" -> "14
    # pallets", "flat fourteen" -> "flat 40"); one the KB states is the business's own.
    given = _numbers_said(customer)
    kb_quantities = _kb_quantities(kb)
    known = f"{kb}\n{customer}".casefold()
    for slot, numbers in quantities(reply).items():
        held = said.values.get(slot)
        # A reply naming theirs among others ("in 1.25mg, 2.5mg and 5mg") lists options.
        if not held or set(held[0].split("|")) & {str(n) for n in numbers}:
            continue
        business = kb_quantities.get(slot, {})
        wrong = [
            quote
            for n, quote in numbers.items()
            if n not in given and n not in business and quote.casefold() not in known
        ]
        if not wrong:
            continue
        sentence = sentence_at(sentences, reply.find(wrong[0]))
        text = sentence.text if sentence else reply
        # "that brings it to 9 visits": a count worked out, not the customer's read back.
        if not _WORKED_OUT.search(text[: max(0, text.find(wrong[0]))]):
            out.append((slot, wrong[0], text))
    for sentence in sentences:
        if not _RESTATES.search(sentence.text):
            continue
        clauses = restating_clauses(sentence.text)
        for slot, found in (
            ("day", {_day(m.group(1)): m.group(0) for c in clauses for m in _days(c)}),
            ("date", dict(d for c in clauses for d in _dates(c) if not _ends_range(c, d[1]))),
            ("day_of_month", dict(d for c in clauses for d in _days_of_month(c))),
        ):
            held = said.values.get(slot)
            if not held or not found:
                continue
            other = [quote for value, quote in found.items() if value not in held[0].split("|")]
            if other:
                out.append((slot, other[0], sentence.text))
        for clause in clauses:
            for role, day, quote in _role_days(clause):
                held_role = said.values.get(f"{role} day")
                if held_role and held_role[0] != day:
                    out.append((f"{role} day", quote, sentence.text))
        for m in _CODE.finditer(sentence.text):
            held_code = said.values.get(f"code:{_code_shape(m.group(0))}")
            if held_code and held_code[0] != m.group(0) and m.group(0) not in kb:
                out.append((f"code:{_code_shape(m.group(0))}", m.group(0), sentence.text))
        held_party = said.values.get("party")
        wrong = _party_conflict(held_party[0], _counts(sentence.text)) if held_party else None
        if wrong:
            out.append(("party", wrong, sentence.text))
        held_other = said.values.get("other_name")
        if held_other:
            for m in _NAMED.finditer(sentence.text):
                word = m.group(1) or m.group(2)
                known = f"{kb}\n{customer}".casefold()
                if word.casefold() in known or word.casefold() in _NOT_NAMES:
                    continue
                if word.casefold() in _DAYS or word[:3].casefold() in _MONTHS:
                    continue
                out.append(("other_name", word, sentence.text))
                break
        held_person = said.values.get("person")
        if held_person and held_person[0] not in sentence.text.casefold():
            for person in _people(" ".join(clauses)):
                if person.casefold() not in f"{customer}\n{held_person[0]}".casefold():
                    out.append(("person", person, sentence.text))
                    break
        held_item = said.values.get("item")
        restated = _mentioned(sentence.text, items)
        if held_item and restated and not set(restated) & set(held_item[0].split("|")):
            out.append(("choice", restated[0], sentence.text))
    return out


class PartnerContradiction(Check):
    """Guarantees: tracks the customer's latest name, phone, email, weekday, calendar date and
    time (a later correction replaces the earlier value); a major finding per reply that
    restates one of them differently: addresses them by another name, reads back another phone
    number or email, or confirms another day, date or time in a booking sentence. Values the KB
    holds (the business's own phone, its opening days) are never read as the customer's."""

    check_id = "partner_contradiction"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        said = Said({})
        kb = case.fixture.text
        items = catalog(case, manifest)
        findings: list[Finding] = []
        customer_text = ""
        for turn in case.turns:
            customer_slots(turn.customer, turn.index, said, items)
            customer_text += "\n" + turn.customer
            conflicts = _conflicts(turn.reply, said, kb, customer_text, items)
            if not conflicts:
                continue
            slot, stated, sentence = conflicts[0]
            if slot.startswith("number "):
                # A transposed number: the customer's own, from the turn that gave it.
                quote = slot.removeprefix("number ")
                said_turn = next(t.index for t in case.turns if quote in t.customer)
                slot = "number"
            else:
                _, quote, said_turn = said.values["item" if slot == "choice" else slot]
            findings.append(
                self.finding(
                    case,
                    severity="major",
                    turn_index=turn.index,
                    subject=stated,
                    evidence=[
                        Evidence(source="reply", quote=sentence, turn=turn.index),
                        Evidence(source="customer", quote=quote, turn=said_turn),
                    ],
                    rationale=(
                        f"The customer gave their {slot} as '{quote}', but the reply says "
                        f"'{stated}'."
                    ),
                    fix_target="skill",
                    fix_text=(
                        "Have the assistant read intake details back from what the customer "
                        "said last (keeping corrections), never from an earlier or invented value."
                    ),
                    effort="S",
                    confidence=0.8,
                )
            )
        return findings
