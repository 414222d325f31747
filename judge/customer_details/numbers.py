"""Numbers a customer gives: the party size, quantities with their noun ("40 pallets"),
numbered places ("flat 14"), measures ("5mg"), reference codes and long figures."""

from __future__ import annotations

import re
from decimal import Decimal

from generator.dates import MONTH_NAMES, NUMBER_WORDS, SPOKEN_NUMBER, spoken_number
from judge.customer_details.days import DAYS
from judge.customer_details.names import NOT_NAMES
from judge.dialogue_acts import stem
from judge.text import words

_COUNT = r"(\d{1,3}|" + "|".join(NUMBER_WORDS) + r")"
# How many people: "5 adults", "group of 5", "table for four", "10 ppl".
_PARTY = re.compile(
    rf"\b{_COUNT}\s+(?:people|persons?|players?|guests?|of us|pax|ppl|participants?|attendees?|"
    rf"diners?|riders?)\b|\b(?:group|party|team|table) (?:of|for) {_COUNT}\b",
    re.IGNORECASE,
)
# Part of the party: "2 adults", "our two kids" (others may come too: "me, my wife and our two
# kids" is four).
_SUBGROUP = re.compile(
    rf"\b{_COUNT}\s+(?:adults?|kids?|children|child|teens?|students?|seniors?)\b", re.IGNORECASE
)


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


def party_counts(text: str) -> dict[str, str]:
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


def party_conflict(held: str, stated: dict[str, str]) -> str | None:
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
) | frozenset(stem(name.casefold()) for name in (*MONTH_NAMES, *DAYS))


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
        if noun not in _NOT_QUANTITIES and noun not in NOT_NAMES:
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


def numbers_said(text: str) -> set[int]:
    """Every whole number `text` says, in digits or words ("actually make it 4")."""
    found = {int(n) for n in re.findall(r"(?<![\d.,])\d{1,4}(?![\d])", text)}
    found |= {n for m in re.finditer(SPOKEN_NUMBER, text, re.I) if (n := spoken_number(m.group(0)))}
    return found


# Reference codes the customer gives: "VM-20931", "BE-7720145", "MM-55120-K".
CODE = re.compile(r"\b[A-Z]{1,4}[-/]?\d{3,}(?:[-/][A-Z0-9]+)?\b")


def code_shape(code: str) -> str:
    """Letters kept, digits as '9': codes of one shape are the same kind of reference."""
    return re.sub(r"\d", "9", code)


# Numbers and codes a customer gives: an account or order number, a booking code, a phone, an
# amount ("$540k", "12,000"). Five or more characters, so a date or a time is never one.
_FIGURE_TOKEN = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:[, ]\d{3})+|\d+(?:[.,]\d+)?\s?k|\d[\d ]{3,}\d|(?=[A-Z]*\d)[A-Z\d]{5,})"
    r"(?![\w.,]\w)"
)


def figure_tokens(text: str) -> dict[str, str]:
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
