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

(c) A lexical path for everything else (`judge.contradiction`, fitted on human dialogues): a
    sentence of a later reply that shares at least LEXICAL_MIN_SHARED content words with a
    statement of an earlier reply and reverses it (a negation, the opposite stance, an
    antonym), scoring at least LEXICAL_THRESHOLD - "Yes, steam carpet cleaning from 40 per room"
    then "we don't offer carpet cleaning". Questions, conditionals ("if you ...") and look-ups
    ("I can't find that", "I'm not sure") are never compared: a look-up's answer depends on
    what the customer gave. A turn the rules above already reported is not reported again.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from decimal import Decimal

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.claims import (
    WEEKDAYS,
    answer_polarity,
    content_stems,
    day_number,
    duration_matches,
    first_sentence,
    reply_statements,
    stem,
    the_question,
)
from judge.contradiction import Clause, Pair, assess, negation_near
from judge.dialogue_acts import STOP, content_words
from judge.facts import extract_facts, money_text
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig, Severity, Turn
from judge.support import stem as word_stem
from judge.support import tokens
from judge.text import DAY_WORD, Sentence, quote_around, split_sentences, words

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
    r"|what i said (?:earlier|before) (?:was|is) (?:wrong|incorrect|not right)"
    r"|you(?:'re|’re| are) (?:absolutely |quite |totally |completely )?right"
    r"(?! (?:on|at|in|here|there|next|to|now|by|outside|around))"
    r"|sorry (?:for|about) the mix-?up|(?:please )?(?:ignore|disregard) what i (?:said|wrote)"
    r"|(?:i|we) (?:misread|misunderstood)|apologies for (?:the|my) (?:confusion|mistake|error))",
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

# The lexical path (c): stricter than the scorer's DECISION_THRESHOLD (0.5), which is tuned for
# balanced accuracy on chit-chat; a bot transcript has many more sentence pairs to compare.
LEXICAL_THRESHOLD = 0.7
LEXICAL_MIN_SHARED = 2
_MAX_QUOTE = 240
# Statements whose truth depends on what the customer supplied or on the moment: look-ups,
# knowledge, availability. They may change between turns without a contradiction.
_SITUATIONAL_TEXT = re.compile(
    r"\b(?:find|found|locate|see|look(?:ed|ing)?\s+(?:up|into)|know|sure|information|info"
    r"|details|record|records|understand|available|availability|slots?|booked|fully|left"
    r"|remaining|spaces?|anymore|yet|currently|right now|today|tomorrow)\b",
    re.IGNORECASE,
)
# Words that name which case a statement is about: two statements with different ones ("for
# children" / "for adults", "on Monday" / "on Tuesday") are about different subjects.
_QUALIFIER_GROUPS = tuple(
    frozenset(word_stem(w) for w in tokens(group))
    for group in (
        "monday tuesday wednesday thursday friday saturday sunday weekday weekend weekdays "
        "weekends holiday holidays",
        "morning afternoon evening night lunchtime",
        "child children kid kids adult adults teen teens teenager teenagers senior seniors "
        "student students baby babies infant toddler",
        "new existing returning member members nonmember",
        "online phone email person chat website app post",
        "january february march april may june july august september october november december",
        "single double twin family suite",
        "small medium large",
        "dog dogs cat cats rabbit rabbits",
        "fixed variable flexible",
        "inside outside indoor outdoor",
    )
)
# Verbs a service statement is built around; they do not name its subject.
_SERVICE_VERBS = frozenset(
    word_stem(w)
    for w in tokens(
        "offer offers offered provide provides have has do does take takes accept accepts "
        "allow allows include includes included need needs require requires required cost costs "
        "charge charges welcome welcomed stock sell sells open opens closed book booked come"
    )
)
# Conditions and restrictions: "only for patients who ...", "not without a check-up".
# ("only $99" stresses a price; it restricts nothing.)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|in case|once|when you|as long as|otherwise|"
    # "only 2 left" or "£20 only" restricts a figure; "refunded as store credit only" another
    # thing of the sentence, not a condition on it.
    r"only(?!\s+(?:[$€£¥₹]|\d|chf|eur|usd|gbp|sek|kr\b)|\s*(?:[.,;!)]|$))|without|except"
    r"|apart from|other than)\b",
    re.IGNORECASE,
)


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
    are compared with. Lexical path, for a turn those rules did not report: when a sentence of
    the reply shares at least LEXICAL_MIN_SHARED content words with a statement of an earlier
    reply, reverses it (a negation, the opposite stance, an antonym) and scores at least
    LEXICAL_THRESHOLD (`judge.contradiction`), neither being a question, a condition or
    restriction, or a look-up, nor naming different cases (weekdays, age groups ...), one major
    finding quotes both sentences; its subject is the reversing clause, verbatim. Figure path,
    for a turn no other path reported: a piece of the reply giving an amount (or "free") for
    something every earlier mention of which (its words a subset of the other's, same currency)
    had another amount, one major finding quoting both pieces."""

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
        flagged = {f.turn_index for f in findings}
        for number, turn in enumerate(case.turns):
            if number and turn.index not in flagged and not ACKNOWLEDGMENT.search(turn.reply):
                found = (
                    self._lexical(case, case.turns[:number], turn)
                    or self._figure(case, case.turns[:number], turn)
                    or self._closed_day_visit(case, case.turns[:number], turn, manifest)
                )
                if found:
                    findings.append(found)
        return findings

    def _figure(self, case: CaseTranscript, before: list[Turn], turn: Turn) -> Finding | None:
        """Path (d): a reply giving another amount for what an earlier reply priced."""
        pair = _figure_reversal(before, turn)
        if pair is None:
            return None
        earlier, later = pair
        return self.finding(
            case,
            severity="major",
            turn_index=turn.index,
            subject=later.text[:200],
            evidence=[
                Evidence(source="reply", quote=earlier.text, turn=earlier.turn),
                Evidence(source="reply", quote=later.text, turn=later.turn),
            ],
            rationale=(
                f"The reply in turn {earlier.turn} says '{earlier.text}'; the reply in turn "
                f"{later.turn} says '{later.text}', a different amount, without acknowledging "
                "the change."
            ),
            fix_target="prompt",
            fix_text=(
                "Instruct the responder to stay consistent with the prices it already gave (give "
                "it the full conversation) and to say so explicitly when it corrects one."
            ),
            effort="S",
            confidence=0.7,
        )

    def _closed_day_visit(
        self, case: CaseTranscript, before: list[Turn], turn: Turn, manifest: Manifest
    ) -> Finding | None:
        """Path (e): a reply welcoming the customer on a day an earlier reply said is closed
        ("Open Mon-Sat" ... "Yes, see you Sunday!")."""
        welcoming = [
            s
            for s in split_sentences(turn.reply)
            if _WELCOMING.search(s.text)
            and DAY_WORD.search(s.text)
            and not _NOT_WELCOMING.search(s.text)
        ]
        if not welcoming:
            return None  # the cheap test first: reading earlier replies' days costs more
        closed: dict[int, tuple[int, str]] = {}
        for earlier in before:
            for day, quote in closed_days(earlier.reply, manifest).items():
                closed[day] = (earlier.index, quote)
            for day in open_days(earlier.reply, manifest):
                closed.pop(day, None)
        for sentence in welcoming:
            for m in DAY_WORD.finditer(sentence.text):
                day = day_number(m.group(0))
                if day not in closed:
                    continue
                earlier_turn, quote = closed[day]
                return self.finding(
                    case,
                    severity="major",
                    turn_index=turn.index,
                    subject=m.group(0),
                    evidence=[
                        Evidence(source="reply", quote=quote, turn=earlier_turn),
                        Evidence(source="reply", quote=sentence.text, turn=turn.index),
                    ],
                    rationale=(
                        f"The reply in turn {earlier_turn} says '{quote}', so the business is "
                        f"closed on {WEEKDAYS[day]}; the reply in turn {turn.index} welcomes the "
                        f"customer on {m.group(0)}, without acknowledging the change."
                    ),
                    fix_target="prompt",
                    fix_text=(
                        "Have the responder check the opening days it gave before agreeing to a "
                        "visit, and say so explicitly when it corrects itself."
                    ),
                    effort="S",
                    confidence=0.75,
                )
        return None

    def _lexical(self, case: CaseTranscript, before: list[Turn], turn: Turn) -> Finding | None:
        """Path (c): the sentence of `turn`'s reply that most surely reverses a statement of
        an earlier reply, as a finding; None when no sentence qualifies."""
        earlier = [t.reply for t in before]
        contexts = [t.customer for t in before]
        best: tuple[float, Pair] | None = None
        for sentence in split_sentences(turn.reply):
            if "?" in sentence.text:
                continue
            result = assess(earlier, sentence.text, contexts=contexts, prompt=turn.customer)
            pair = result.pair
            if (
                result.score < LEXICAL_THRESHOLD
                or pair is None
                or not pair.flipped
                or len(pair.shared) < LEXICAL_MIN_SHARED
                or not _comparable(pair.earlier)
                or not _comparable(pair.later)
                or _different_subjects(pair)
                or (
                    pair.negation_flip
                    and not (pair.stance_flip or pair.antonym)
                    and not _negates_shared(pair)
                )
            ):
                continue
            if best is None or result.score > best[0]:
                best = (result.score, pair)
        if best is None:
            return None
        score, pair = best
        earlier_turn = before[pair.earlier_index]
        reversal = ", ".join(
            name
            for name, flag in (
                ("negation", pair.negation_flip),
                ("opposite stance", pair.stance_flip),
                ("antonym", pair.antonym),
            )
            if flag
        )
        later_quote = _quote_clause(pair.later)
        earlier_quote = _quote_clause(pair.earlier)
        return self.finding(
            case,
            severity="major",
            turn_index=turn.index,
            subject=pair.later.text[:200],
            evidence=[
                Evidence(source="reply", quote=earlier_quote, turn=earlier_turn.index),
                Evidence(source="reply", quote=later_quote, turn=turn.index),
            ],
            rationale=(
                f"The reply in turn {earlier_turn.index} says '{earlier_quote}'; the reply in "
                f"turn {turn.index} says '{later_quote}' about the same thing "
                f"({', '.join(sorted(pair.shared))}) the other way round ({reversal}), "
                f"without acknowledging the change (lexical contradiction score {score:.2f})."
            ),
            fix_target="prompt",
            fix_text=(
                "Instruct the responder to stay consistent with what it already told the customer "
                "(give it the full conversation) and, when it must correct itself, to say so "
                "explicitly ('Sorry, I was wrong earlier: ...')."
            ),
            effort="S",
            confidence=round(min(score, 0.9), 2),
        )

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
class _Figure:
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


def _figures(turn: Turn) -> tuple[_Figure, ...]:
    return _figures_of(turn.index, turn.reply)


@functools.lru_cache(maxsize=2048)
def _figures_of(index: int, reply: str) -> tuple[_Figure, ...]:
    """Each piece of a reply (split at commas, dashes and conjunctions) that gives one amount,
    duration or percentage, or says something is free, with the words naming what it is the
    figure of and the other figures of its sentence (the case it is about)."""
    found: list[_Figure] = []
    prices = frozenset(f.value for f in extract_facts(reply) if f.kind == "money")
    for sentence in split_sentences(reply):
        if "?" in sentence.text or _CONDITIONAL.search(_OFFER.sub("", sentence.text)):
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
                    _Figure(
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


def _related(a: _Figure, b: _Figure) -> bool:
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


def _figure_reversal(before: list[Turn], turn: Turn) -> tuple[_Figure, _Figure] | None:
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


def _comparable(clause: Clause) -> bool:
    """A clause that states something fixed: not a question, a condition or restriction (in
    its sentence), or a look-up."""
    text = clause.sentence
    return not (
        clause.question or _CONDITIONAL.search(text) or _SITUATIONAL_TEXT.search(clause.text)
    )


def _different_subjects(pair: Pair) -> bool:
    """The two clauses may be about different things: each names a case the other does not
    (a weekday, "children" / "adults" ...), or each has its own subject - a content word
    before the first shared one that is not a service verb ("the consultation is not included"
    / "the X-rays are included")."""
    later_only = pair.later.content - pair.shared
    earlier_only = pair.earlier.content - pair.shared
    for group in _QUALIFIER_GROUPS:
        if later_only & group and earlier_only & group:
            return True
    return bool(_subject(pair.later, pair.shared) and _subject(pair.earlier, pair.shared))


# A reply agreeing to the customer's visit on a day: "see you Sunday", "Sunday works".
_WELCOMING = re.compile(
    r"\b(?:see you|booked|book you|pencil|works|is fine|suits|come (?:in|along|by)|pop in|"
    r"drop in|walk in|welcome|we'll be here)\b",
    re.IGNORECASE,
)
_NOT_WELCOMING = re.compile(
    r"\b(?:not|no|closed|n't|unfortunately|sorry|except|instead|apart from)\b|n't\b", re.I
)


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


def _negates_shared(pair: Pair) -> bool:
    """The negated clause of a negation flip negates a word the two clauses share."""
    negated = pair.earlier if pair.earlier.negated else pair.later
    return negation_near(negated.text, pair.shared)


def _subject(clause: Clause, shared: frozenset[str]) -> frozenset[str]:
    """Content stems of `clause` before its first shared one, service verbs left out."""
    out: set[str] = set()
    for word in tokens(clause.text):
        s = word_stem(word)
        if s in shared:
            break
        if s in clause.content and s not in _SERVICE_VERBS:
            out.add(s)
    return frozenset(out)


def _quote_clause(clause: Clause) -> str:
    """A literal quote for `clause`: its sentence, or the clause itself when the sentence is
    long (cut at a word after _MAX_QUOTE characters)."""
    if len(clause.sentence) <= _MAX_QUOTE:
        return clause.sentence
    if len(clause.text) <= _MAX_QUOTE:
        return clause.text
    cut = clause.text[:_MAX_QUOTE]
    return cut[: cut.rfind(" ")] if " " in cut else cut
