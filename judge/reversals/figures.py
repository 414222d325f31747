"""Figures restated differently: the pieces of a reply that give one amount, duration or
percentage (or say something is free), and a later figure for what an earlier reply gave
another figure for."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from judge.dialogue_acts import STOP, content_words
from judge.facts import extract_facts
from judge.reversals.lexical import CONDITIONAL
from judge.schemas import Turn
from judge.support import tokens
from judge.text import split_sentences

# Path (d): a figure restated differently. "The flat fee is $15" ... "the flat fee would be $25".
_FREE = re.compile(
    r"\b(?:free|no (?:additional |extra )?(?:charge|cost|fee)|at no (?:additional |extra )?"
    r"(?:charge|cost)|complimentary|included in (?:the|your) (?:\w+ ){0,2}(?:price|membership|"
    r"plan|fee|package|ticket|pass|subscription|rate|hire|booking|stay|cost)"
    r"|nothing (?:extra |more |else |additional )?to pay|never (?:incurs?|costs?|charges?) (?:a|any)"
    r" (?:fee|charge|cost)|(?:does|do|will)(?:n't| not) cost (?:you )?(?:anything|a (?:penny|thing)))"
    r"\b",
    re.IGNORECASE,
)
_PIECE = re.compile(
    r"[,;()](?=\s)\s*|[;()]|\s+[-–—]\s+|\s+(?:and|but|so|while|whereas|plus)\s+", re.IGNORECASE
)
_UNITS = frozenset(
    content_words(
        "per each person people day days night nights month months hour hours week weeks year "
        "minute minutes cost costs price priced charge charged come comes usual usually just only "
        "about around approximately currently normally eur euro euros usd dollar dollars gbp pound "
        "pounds chf franc francs kr sek nok dkk pence cents incl including vat tax"
    )
)


_FIGURE_KINDS = ("money", "duration", "percent")


@dataclass(frozen=True)
class Figure:
    turn: int
    text: str
    kind: str  # money | duration | percent
    value: str
    subject: frozenset[str]  # the piece's content words
    head: frozenset[str]  # those before the figure: "the representative APR is 6.4%"
    context: frozenset[str]  # the sentence's other figures: "For £6,000, the APR is 9.9%"
    prices: frozenset[str]  # the reply's amounts of money
    noun: str  # the last content word before the figure: "Hearing aid consultation: free"
    total: bool  # a total of an order ("945 kr in total"), which changes as the order does


def _noun(text: str, *, last: bool) -> str:
    """The first (or last, adverbs aside) content word of `text`, stemmed, units aside; "" when
    it has none."""
    for word in reversed(tokens(text)) if last else tokens(text):
        if last and word.endswith("ly"):
            continue
        found = _words_of(word)
        if found:
            return next(iter(found))
    return ""


def _words_of(text: str) -> frozenset[str]:
    found = content_words(text)
    return found - _UNITS - {w for w in found if w[0].isdigit()}


def _figures(turn: Turn) -> tuple[Figure, ...]:
    return _figures_of(turn.index, turn.reply)


@functools.lru_cache(maxsize=2048)
def _figures_of(index: int, reply: str) -> tuple[Figure, ...]:
    """Each piece of a reply (split at commas, dashes and conjunctions) that gives one amount,
    duration or percentage, or says something is free, with the words naming what it is the
    figure of and the other figures of its sentence (the case it is about)."""
    found: list[Figure] = []
    prices = frozenset(f.value for f in extract_facts(reply) if f.kind == "money")
    for sentence in split_sentences(reply):
        if "?" in sentence.text or CONDITIONAL.search(_OFFER.sub("", sentence.text)):
            continue
        everything = [f for f in extract_facts(sentence.text) if f.kind in _FIGURE_KINDS]
        for piece in _pieces(sentence.text):
            # "2 x box pack = £70" works a figure out; "reduces the excess to €0" states what a
            # change makes of it: neither restates the figure.
            if _WORKED.search(piece) or _CHANGED_TO.search(piece):
                continue
            facts = [f for f in extract_facts(piece) if f.kind in _FIGURE_KINDS]
            free = None if facts else _FREE.search(piece)
            if len(facts) == 1:
                [fact] = facts
                kind, value, at = fact.kind, fact.value, fact.start
            elif free is not None:
                kind, value, at = "money", "0", free.start()
            else:
                continue
            # "free collect & deliver": what is free follows the word ("Child seats are free if
            # you need one": it precedes it).
            after = piece[free.end() :].split() if free is not None else []
            # "a 12-year warranty", "a 60-minute massage": the figure qualifies the noun after it.
            if facts and _ADJECTIVAL.search(piece[facts[0].start : facts[0].end]):
                after = piece[facts[0].end :].replace("*", " ").split()
            noun = _noun(after[0], last=False) if after and after[0].casefold() not in STOP else ""
            subject = _words_of(piece)
            mine = {value} | {f.value for f in facts}
            context = frozenset(f.value for f in everything if f.value not in mine)
            if subject and piece.strip():
                found.append(
                    Figure(
                        index,
                        piece.strip(),
                        kind,
                        value,
                        subject,
                        _words_of(piece[:at]),
                        context,
                        prices,
                        noun or _noun(piece[:at], last=True),
                        bool(_TOTAL.search(piece)),
                    )
                )
    return tuple(found)


# A voice transcript's sentence: many words, no punctuation.
_RUN_ON = 15
_PUNCTUATED = re.compile(r"[,;:.!?()\[\]|–—]|\s-\s")


def _pieces(sentence: str) -> list[str]:
    """`sentence` cut at commas, dashes and conjunctions, and, in a long unpunctuated sentence,
    a piece with several figures cut after each of them: a voice transcript ("the nail clip will cost twenty five
    pounds please arrive five minutes early") names each figure's subject before it."""
    found: list[str] = []
    run_on = len(sentence.split()) >= _RUN_ON and not _PUNCTUATED.search(sentence.rstrip(".!? "))
    for piece in _PIECE.split(sentence):
        facts = [f for f in extract_facts(piece) if f.kind in _FIGURE_KINDS] if run_on else []
        if len(facts) < 2 or _WORKED.search(piece):
            found.append(piece)
            continue
        start = 0
        for fact in facts:
            found.append(piece[start : fact.end])
            start = fact.end
        found[-1] += piece[start:]
    return found


# "Child seats are free if you need one": an offer, not a condition on the figure.
_OFFER = re.compile(
    r"\bif (?:you|u) (?:need|want|would like|'d like|like|wish|prefer)(?: (?:one|it|them|any|to))?"
    r"\W*$",
    re.IGNORECASE,
)
_ADJECTIVAL = re.compile(r"\d-[a-z]", re.IGNORECASE)
_WORKED = re.compile(r"\d\s?[×x]\s?\S|\d\s?\*\s?\d|(?<![A-Za-z*])[×x]\s?\d|=")
_CHANGED_TO = re.compile(
    r"\b(?:reduc\w*|lower\w*|rais\w*|increas\w*|drops?|dropping|goes (?:up|down)|cuts?|"
    r"brings?|bringing)\b[^.;]{0,40}\bto\b",
    re.IGNORECASE,
)
_TOTAL = re.compile(
    r"\b(?:total|totals|altogether|in all|all in|comes? to|bringing (?:it|the total) to|"
    r"would make it|makes it)\b",
    re.IGNORECASE,
)
# What an order total moves with: something added, swapped, upgraded or sped up.
_ORDER_CHANGE = re.compile(
    r"\b(?:actually|instead|change|make it|add|adding|also|plus|another|more|upgrade|switch|"
    r"rather|extra|remove|without|swap|express|surcharge|additional|on top|wait|updat\w*|"
    r"revised|new|\d+)\b",
    re.IGNORECASE,
)


def _same_currency(a: str, b: str) -> bool:
    return a == "0" or b == "0" or a.rpartition(" ")[2] == b.rpartition(" ")[2]


def _related(a: Figure, b: Figure) -> bool:
    """Two figures of one thing: the same kind (and currency), the words of one piece all in
    the other's, or the words before the figure so (two or more of them); and not about two
    different cases (each sentence has other figures, none shared)."""
    if a.kind != b.kind or (a.kind == "money" and not _same_currency(a.value, b.value)):
        return False
    if a.context and b.context and not a.context & b.context:
        return False
    # "2 hours of room credit" for one plan, "6 hours" for another: durations and rates in
    # replies that price nothing in common are about different things.
    if a.kind != "money" and a.prices and b.prices and not a.prices & b.prices:
        return False
    # "Hearing aid consultation: free" and "Hearing aids from €1,200": another thing.
    # (Unless each names the other's thing too: "nail clips ... in our nurse clinics which cost
    # £18" and "a nurse clinic ... the nail clip will cost £25".)
    if a.noun and b.noun and a.noun != b.noun and not (a.noun in b.subject and b.noun in a.subject):
        return False
    if a.subject <= b.subject or b.subject <= a.subject:
        return True
    small, large = sorted((a.head, b.head), key=len)
    if len(small) >= 2 and small <= large:
        return True
    # "collection is charged at £15" after "free collect & deliver": one named thing.
    return bool(a.noun) and a.noun == b.noun and (a.head <= b.subject or b.head <= a.subject)


def _order_changed(before: list[Turn], turn: Turn, *, since: int) -> bool:
    """Since turn `since`, the customer or the reply changed the order: something added,
    swapped, upgraded, or a new figure given ("can we do 4 nights"), so its total may differ."""
    return bool(_ORDER_CHANGE.search(turn.reply)) or any(
        _ORDER_CHANGE.search(t.customer) for t in (*before, turn) if t.index > since
    )


def figure_reversal(before: list[Turn], turn: Turn) -> tuple[Figure, Figure] | None:
    """A figure the reply gives for something an earlier reply gave another figure for: every
    earlier related figure different. An order total may change when the order did since (the
    customer or the reply adds, swaps or upgrades something)."""
    earlier = [f for t in before for f in _figures(t)]
    for later in _figures(turn):
        related = [
            e
            for e in earlier
            if _related(e, later)
            and not ((e.total or later.total) and _order_changed(before, turn, since=e.turn))
        ]
        if related and all(e.value != later.value for e in related):
            return related[-1], later
    return None
