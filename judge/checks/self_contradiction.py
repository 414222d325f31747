"""Check: a reply reverses what an earlier reply said, without acknowledging the change.

Seed 001's position-reversal rubric, generalised from one yes/no position to the factual
statements a booking assistant makes across turns:

(a) a yes/no position on one subject - open/closed on a day, (not) offering something, can/cannot
    do something, a bare "Yes"/"No" to the same question - reversed in a later turn;
(b) one subject - a service's price or duration, a day's opening or closing time - given two
    different values in different turns.

Either is a contradiction only when the later reply has no acknowledgment phrase ("sorry, I was
wrong", "correction", "upon checking" ...). Positions that depend on the customer's situation
(can/cannot, yes/no answers) may change when the customer corrected themselves in between
("sorry, I meant the 15th"); facts about the business may not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal

from generator.schemas import Manifest
from judge.checks.base import Check
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
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig, Severity
from judge.text import Sentence, quote_around, split_sentences, words

# The later reply admits the change (seed 001 Decision 3, extended to a booking assistant).
ACKNOWLEDGMENT = re.compile(
    r"\b(?:sorry,? (?:i|we) (?:was|were) wrong|i was wrong|we were wrong|i was mistaken"
    r"|correction\b|to correct (?:myself|my|what|that|an?)|let me correct|i (?:need|have|want) to "
    r"correct|i misspoke|i made (?:a|an) (?:mistake|error)|we made (?:a|an) (?:mistake|error)"
    r"|my mistake|my error|my apologies|apologi[sz]e for (?:the|my) (?:confusion|mistake|error)"
    r"|sorry for (?:the|my) (?:confusion|mistake|error)|upon checking|on checking|having checked"
    r"|having double-checked|i(?:'ve| have) (?:just )?(?:double-)?checked|i (?:just )?checked again"
    r"|on second thought|upon reflection|i stand corrected|i got (?:that|it) wrong"
    r"|that was (?:incorrect|wrong|a mistake|not right)|(?:i|we) (?:said|told you|mentioned|stated)"
    r" (?:earlier|before|previously)|earlier i (?:said|told|mentioned|stated)|previously i"
    r"|contrary to what i|not as i (?:said|stated)|changed my mind|i(?:'ve| have) reconsidered"
    r"|let me revise|initially i thought|(?:i )?should have said|i gave you (?:the )?wrong"
    r"|incorrectly (?:said|stated|told)|that's not right|that is not right|i was incorrect"
    r"|what i said (?:earlier|before) (?:was|is) (?:wrong|incorrect|not right))",
    re.IGNORECASE,
)
# The customer corrected their own details ("sorry, I meant the 15th").
CUSTOMER_CORRECTION = re.compile(
    r"\b(?:i meant|i mean|correction|my mistake|my bad|typo|i was wrong|i got (?:it|that) wrong"
    r"|wait|change (?:it|that|my|the)|instead|scratch that|make it|rather|actually|oops|sorry,? not"
    r"|not the \w+,? (?:but|the))\b",
    re.IGNORECASE,
)
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
_SITUATIONAL = frozenset({"can", "answer"})
_CONFIDENCE = {"price": 0.9, "duration": 0.85, "open": 0.9, "opens": 0.85, "closes": 0.85}


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


class SelfContradiction(Check):
    """Guarantees: when a reply states a value or yes/no position on a subject (a service's
    price or duration, a day being open or its opening/closing time, offering something, a
    can/cannot, a bare yes/no to the same question) that cannot be true together with what an
    earlier reply stated on that subject, and the later reply has no acknowledgment phrase, one
    finding per subject per turn quotes both replies: critical for a price, else major.
    Can/cannot and yes/no positions are exempt when the customer corrected their own details
    in between. Values of the same turn are merged; the latest statement is what later turns
    are compared with."""

    check_id = "self_contradiction"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        history: list[Position] = []
        for turn in case.turns:
            acknowledged = bool(ACKNOWLEDGMENT.search(turn.reply))
            reversed_from: set[int] = set()
            current = positions(turn.index, turn.customer, turn.reply, manifest)
            # Facts first, so a yes/no answer does not repeat a reversal already reported.
            current.sort(key=lambda p: p.kind in _SITUATIONAL)
            for position in current:
                earlier = next((q for q in reversed(history) if same_subject(q, position)), None)
                if earlier is not None:
                    history.remove(earlier)
                history.append(position)
                if earlier is None or compatible(earlier, position) or acknowledged:
                    continue
                if position.kind in _SITUATIONAL and (
                    earlier.turn in reversed_from
                    or self._customer_corrected(case, earlier.turn, turn.index)
                ):
                    continue
                reversed_from.add(earlier.turn)
                findings.append(self._finding(case, earlier, position))
        return findings

    @staticmethod
    def _customer_corrected(case: CaseTranscript, after: int, until: int) -> bool:
        return any(
            CUSTOMER_CORRECTION.search(t.customer) for t in case.turns if after < t.index <= until
        )

    def _finding(self, case: CaseTranscript, earlier: Position, later: Position) -> Finding:
        severity: Severity = "critical" if later.kind == "price" else "major"
        subject = later.key or f"{later.kind}:{' '.join(sorted(later.words | earlier.words))}"
        return self.finding(
            case,
            severity=severity,
            turn_index=later.turn,
            subject=subject[:200],
            evidence=[
                Evidence(source="reply", quote=earlier.quote, turn=earlier.turn),
                Evidence(source="reply", quote=later.quote, turn=later.turn),
            ],
            rationale=(
                f"The reply in turn {earlier.turn} says {earlier.said}; the reply in turn "
                f"{later.turn} says {later.said}, without acknowledging the change."
            ),
            fix_target="prompt",
            fix_text=(
                "Instruct the responder to stay consistent with what it already told the customer "
                "(give it the full conversation), to check the KB before restating a price, "
                "duration, day or time, and, when it must correct itself, to say so explicitly "
                "('Sorry, I was wrong earlier: ...')."
            ),
            effort="S",
            confidence=_CONFIDENCE.get(later.kind, 0.75),
        )
