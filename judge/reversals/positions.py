"""The positions a reply takes, one per subject: a service's price or duration, a day open
or its hours, something offered or not, a can/cannot, a bare yes/no to the customer's
question; and when two positions are on one subject and can both be true."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal

from generator.schemas import Manifest
from judge.claims import (
    WEEKDAYS,
    answer_polarity,
    content_stems,
    duration_matches,
    first_sentence,
    reply_statements,
    stem,
    the_question,
)
from judge.facts import money_text
from judge.text import Sentence, quote_around, split_sentences, words

_BE = r"(?:\s+(?:am|are)|['’](?:m|re))"
_CAN = re.compile(
    r"\b(?P<who>i|we|you)"
    rf"(?:(?P<neg>\s+(?:cannot|can't|can’t|can not|won't be able to)|{_BE}\s+(?:not able|unable) to)"
    rf"|\s+can|{_BE}\s+able to|\s+will be able to)\s+"
    r"(?:only\s+|also\s+|still\s+|definitely\s+|certainly\s+)?(?P<obj>[^.,;:!?]{3,60})",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    stem(w)
    for w in words(
        "can could would will you your are is do does did what when how which who why there "
        "any please hi hello hey thanks"
    )
)
# Kinds whose subject is a bag of words, matched by overlap (Jaccard, shared words).
_FUZZY = {"offer": (0.5, 1), "can": (0.6, 2), "answer": (0.6, 2)}


@dataclass(frozen=True)
class Position:
    """One subject's value as a reply states it."""

    kind: str  # price | duration | open | opens | closes | offer | can | answer
    key: str  # exact subject ("" for the fuzzy kinds)
    words: frozenset[str]  # fuzzy subject
    values: frozenset[str]
    said: str  # the statement in words: "the price of Hygiene clean is 80 EUR"
    turn: int
    quote: str
    approximate: bool = False


def _quote(reply: str, sentence: Sentence, start: int, end: int) -> str:
    return quote_around(reply, sentence, start, end)


def positions(turn_index: int, customer: str, reply: str, manifest: Manifest) -> list[Position]:
    """Every position the reply of one turn takes, one per subject (values merged)."""
    statements = reply_statements(customer, reply, manifest)
    found: list[Position] = []
    for claim in statements.services:
        service = claim.service
        if service is None:
            continue  # "a check-up" may be two services: no single subject
        unit = manifest.currency if claim.kind == "price" else "min"
        found.append(
            Position(
                claim.kind,
                f"{claim.kind}:{service}",
                frozenset(),
                frozenset({money_text(claim.amount)}),
                f"the {claim.kind} of {service} is {money_text(claim.amount)} {unit}",
                turn_index,
                _quote(reply, claim.sentence, claim.start, claim.end),
                claim.approximate,
            )
        )
    for day in statements.days:
        name = WEEKDAYS[day.day]
        if day.kind == "open":
            value = "open" if day.is_open else "closed"
            found.append(
                Position(
                    "open",
                    f"open:{name}",
                    frozenset(),
                    frozenset({value}),
                    f"the business is {value} on {name}",
                    turn_index,
                    _quote(reply, day.sentence, day.start, day.end),
                )
            )
        else:
            verb = "opening" if day.kind == "opens" else "closing"
            found.append(
                Position(
                    day.kind,
                    f"{day.kind}:{name}",
                    frozenset(),
                    day.times,
                    f"the {verb} time on {name} is {' / '.join(sorted(day.times))}",
                    turn_index,
                    _quote(reply, day.sentence, day.start, day.end),
                )
            )
    for offer in statements.offers:
        value = "yes" if offer.offered else "no"
        found.append(
            Position(
                "offer",
                f"offer:{offer.service}" if offer.service else "",
                frozenset() if offer.service else offer.words,
                frozenset({value}),
                f"{offer.subject} is {'' if offer.offered else 'not '}offered",
                turn_index,
                _quote(reply, offer.sentence, offer.start, offer.end),
            )
        )
    found += _can_positions(turn_index, reply)
    answer = _answer_position(turn_index, customer, reply)
    if answer:
        found.append(answer)
    return _merge(found)


def _can_positions(turn_index: int, reply: str) -> list[Position]:
    found: list[Position] = []
    for sentence in split_sentences(reply):
        if "?" in sentence.text:
            continue
        for match in _CAN.finditer(sentence.text):
            stems = content_stems(match.group("obj"))
            if len(stems) < 2:
                continue  # "I can help" carries no subject to compare
            who = "you" if match.group("who").casefold() == "you" else "we"
            able = not match.group("neg")
            start = sentence.start + match.start()
            found.append(
                Position(
                    "can",
                    "",
                    frozenset({f"@{who}"}) | stems,
                    frozenset({"yes" if able else "no"}),
                    f"{who} {'can' if able else 'cannot'} {match.group('obj').strip()}",
                    turn_index,
                    _quote(reply, sentence, start, sentence.start + match.end()),
                )
            )
    return found


def _answer_position(turn_index: int, customer: str, reply: str) -> Position | None:
    """Seed 001: a reply opening with a plain yes/no takes a position on the customer's question."""
    polarity = answer_polarity(reply)
    question = the_question(customer)
    head = first_sentence(reply)
    if polarity is None or question is None or head is None:
        return None
    stems = content_stems(question) - _QUESTION_WORDS
    if len(stems) < 2:
        return None
    return Position(
        "answer",
        "",
        stems,
        frozenset({"yes" if polarity else "no"}),
        f"{'yes' if polarity else 'no'} to '{question.strip()}'",
        turn_index,
        head.text,
    )


def _merge(found: list[Position]) -> list[Position]:
    """One position per exact subject within a turn (a turn may state a value twice)."""
    merged: dict[str, Position] = {}
    out: list[Position] = []
    for position in found:
        if not position.key:
            out.append(position)
            continue
        earlier = merged.get(position.key)
        if earlier is None:
            merged[position.key] = position
            out.append(position)
        else:
            joined = replace(
                earlier,
                values=earlier.values | position.values,
                approximate=earlier.approximate or position.approximate,
            )
            merged[position.key] = joined
            out[out.index(earlier)] = joined
    return out


def same_subject(a: Position, b: Position) -> bool:
    if a.kind != b.kind:
        return False
    if a.key or b.key:
        return a.key == b.key
    threshold, min_shared = _FUZZY[a.kind]
    shared = a.words & b.words
    if len(shared) < min_shared:
        return False
    if a.kind == "offer" and not any(len(w) >= 5 for w in shared):
        return False
    return len(shared) / len(a.words | b.words) >= threshold


def compatible(a: Position, b: Position) -> bool:
    """The two values can both be true."""
    if a.kind == "duration" and (a.approximate or b.approximate):
        return any(
            duration_matches(Decimal(x), int(Decimal(y)), True) for x in a.values for y in b.values
        )
    return bool(a.values & b.values)


def open_days(reply: str, manifest: Manifest) -> set[int]:
    """The weekdays a reply says the business is open."""
    return {
        d.day for d in reply_statements("", reply, manifest).days if d.kind == "open" and d.is_open
    }


def closed_days(reply: str, manifest: Manifest) -> dict[int, str]:
    """The weekdays a reply says (or, giving a whole week's schedule of five or more open
    days, implies) the business is closed, each with the sentence that says it."""
    statements = reply_statements("", reply, manifest).days
    closed = {d.day: d.sentence.text for d in statements if d.kind == "open" and not d.is_open}
    opened = [d for d in statements if d.kind == "open" and d.is_open]
    if len({d.day for d in opened}) >= 5:
        for day in set(range(7)) - {d.day for d in opened}:
            closed.setdefault(day, opened[0].sentence.text)
    return closed
