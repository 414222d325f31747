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

import re

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.claims import WEEKDAYS, day_number
from judge.contradiction import Pair, assess
from judge.reversals.figures import figure_reversal
from judge.reversals.lexical import comparable, different_subjects, negates_shared, quote_clause
from judge.reversals.positions import (
    Position,
    closed_days,
    compatible,
    open_days,
    positions,
    same_subject,
)
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig, Turn
from judge.text import DAY_WORD, split_sentences
from qalab.domain import Severity

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
_SITUATIONAL = frozenset({"can", "answer"})
# The business speaking of itself.
_BUSINESS_VOICE = re.compile(r"\b(?:we|we're|we've|we'll|our|ours)\b", re.IGNORECASE)
_CONFIDENCE = {"price": 0.9, "duration": 0.85, "open": 0.9, "opens": 0.85, "closes": 0.85}

# The lexical path (c): stricter than the scorer's DECISION_THRESHOLD (0.5), which is tuned for
# balanced accuracy on chit-chat; a bot transcript has many more sentence pairs to compare.
LEXICAL_THRESHOLD = 0.7
LEXICAL_MIN_SHARED = 2


class SelfContradiction(Check):
    """Guarantees: when a reply states a value or yes/no position on a subject (a service's
    price or duration, a day being open or its opening/closing time, offering something, a
    can/cannot, a bare yes/no to the same question) that cannot be true together with what an
    earlier reply stated on that subject, and the later reply has no acknowledgment phrase, one
    finding per subject per turn quotes both replies: critical for a fact about the business (a
    price, duration, day or time, a service offered or not), major for a can/cannot or yes/no.
    Can/cannot and yes/no positions are exempt when the customer corrected their own details
    in between. Values of the same turn are merged; the latest statement is what later turns
    are compared with. Lexical path, for a turn those rules did not report: when a sentence of
    the reply shares at least LEXICAL_MIN_SHARED content words with a statement of an earlier
    reply, reverses it (a negation, the opposite stance, an antonym) and scores at least
    LEXICAL_THRESHOLD (`judge.contradiction`), neither being a question, a condition or
    restriction, or a look-up, nor naming different cases (weekdays, age groups ...), one
    finding quotes both sentences (critical when both say what the business does, else major);
    its subject is the reversing clause, verbatim. Figure path, for a turn no other path
    reported: a piece of the reply giving an amount (or "free") for something every earlier
    mention of which (its words a subset of the other's, same currency) had another amount,
    one major finding quoting both pieces."""

    rule = Rule(
        "self_contradiction",
        "major",
        "deterministic",
        "prompt",
        "The responder reverses a position or gives a different value for the same subject in a "
        "later turn without acknowledging it (a reversal found by word overlap alone needs "
        "{LEXICAL_MIN_SHARED} content words in common and a lexical contradiction score of at "
        "least {LEXICAL_THRESHOLD}). With the semantic layer, the contradiction head confirms "
        "each finding and, in a dialogue with no KB, reports on its own.",
        action="Stop contradicting earlier answers",
        severity_when={
            "critical": "when it is a fact about the business: a price, duration, day or time, "
            "a service offered or not, a 'we ...' statement reversed"
        },
        thresholds={
            "LEXICAL_THRESHOLD": LEXICAL_THRESHOLD,
            "LEXICAL_MIN_SHARED": LEXICAL_MIN_SHARED,
        },
    )

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
        pair = figure_reversal(before, turn)
        if pair is None:
            return None
        earlier, later = pair
        return self.finding(
            case,
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
                or not comparable(pair.earlier)
                or not comparable(pair.later)
                or different_subjects(pair)
                or (
                    pair.negation_flip
                    and not (pair.stance_flip or pair.antonym)
                    and not negates_shared(pair)
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
        later_quote = quote_clause(pair.later)
        earlier_quote = quote_clause(pair.earlier)
        # Both sides state what the business does or has ("we repair ...", "we do not repair
        # ..."): a contradictory factual claim, critical; other reversals are major.
        business = all(_BUSINESS_VOICE.search(q) for q in (earlier_quote, later_quote))
        return self.finding(
            case,
            severity="critical" if business else "major",
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
        # A business fact said both ways (a price, a duration, a day or time, a service it does
        # or does not offer) is a contradictory factual claim: critical (DESIGN §9). A position
        # that depends on the customer's situation (can / cannot, a yes/no answer) is major.
        severity: Severity = "major" if later.kind in _SITUATIONAL else "critical"
        key = later.key or f"{later.kind}:{' '.join(sorted(later.words | earlier.words))}"
        return self.finding(
            case,
            severity=severity,
            turn_index=later.turn,
            # The later statement, verbatim; the fingerprint keys the subject and its kind.
            subject=later.quote[:200],
            key=key[:200],
            evidence=[
                Evidence(source="reply", quote=earlier.quote, turn=earlier.turn),
                Evidence(source="reply", quote=later.quote, turn=later.turn),
            ],
            rationale=(
                f"The reply in turn {earlier.turn} says {earlier.said}; the reply in turn "
                f"{later.turn} says {later.said}, without acknowledging the change."
            ),
            fix_text=(
                "Instruct the responder to stay consistent with what it already told the customer "
                "(give it the full conversation), to check the KB before restating a price, "
                "duration, day or time, and, when it must correct itself, to say so explicitly "
                "('Sorry, I was wrong earlier: ...')."
            ),
            effort="S",
            confidence=_CONFIDENCE.get(later.kind, 0.75),
        )


# A reply agreeing to the customer's visit on a day: "see you Sunday", "Sunday works".
_WELCOMING = re.compile(
    r"\b(?:see you|booked|book you|pencil|works|is fine|suits|come (?:in|along|by)|pop in|"
    r"drop in|walk in|welcome|we'll be here)\b",
    re.IGNORECASE,
)
_NOT_WELCOMING = re.compile(
    r"\b(?:not|no|closed|n't|unfortunately|sorry|except|instead|apart from)\b|n't\b", re.I
)
