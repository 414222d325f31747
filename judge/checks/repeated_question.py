"""Check: the responder asks the same question again in a later turn."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.checks.questions_per_turn import question_sentences
from judge.dialogue_acts import ASKS, clauses
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import split_sentences, words

# Politeness words change between re-asks without changing the question.
_FILLER = frozenset(
    words(
        "a an the please could can you your would kindly may i me us my our just also and or to "
        "of for is are do does let know what what's which tell give share provide sorry again it "
        "that this so great thanks thank ok okay now then how be will with like get take have "
        "there please lovely perfect no problem sure right at still moment currently confirm ask "
        "whether if were was thinking prefer want wish"
    )
)
_SIMILAR = 0.8
# A reworded re-ask of the same detail: "could I get a contact number" / "can I take a contact
# number for the booking", "how many passengers" / "how many people". The detail a question asks
# for, by the words that name it (synonyms folded).
_SLOTS = {
    **dict.fromkeys(words("name surname"), "name"),
    **dict.fromkeys(words("phone mobile number contact"), "phone"),
    **dict.fromkeys(words("email e-mail"), "email"),
    **dict.fromkeys(words("date day when"), "date"),
    **dict.fromkeys(words("time"), "time"),
    **dict.fromkeys(
        words("people passenger guest adult person traveller player many party size"), "people"
    ),
    **dict.fromkeys(words("address postcode"), "address"),
    **dict.fromkeys(words("service treatment appointment"), "service"),
    **dict.fromkeys(words("level course class"), "level"),
    **dict.fromkeys(words("card"), "card"),
    **dict.fromkeys(words("account reference policy"), "account"),
    **dict.fromkeys(words("reason problem issue"), "reason"),
    **dict.fromkeys(words("member membership"), "membership"),
}
_REWORDED = 0.2
# A bot question without a question mark (voice transcripts): an interrogative or an auxiliary
# before its subject at the start of a clause.
# A relative "what" ("here is what our information says") asks nothing.
_ASKING = re.compile(
    r"^(?:[\w']+[ ,]+){0,4}?(?<!is )(?<!'s )(?<!says )(?<!know )(?<!see )"
    r"(?P<wh>what|which|when|where|who|how (?:many|much|long|old))\b"
    # "apologies marcus the card's now cancelled do you still have the card with you"
    r"|^(?:[\w']+[ ,]+){0,8}?(?P<aux>(?:could|can|may|would|will|do|did|are|have) (?:i|you|we))\b"
    r"|^(?:[\w']+[ ,]+){0,4}?(?P<is>is (?:it|that|there))\b",
    re.IGNORECASE,
)
# "... before i do that can i take your full name please": the ask starts mid-sentence.
_ASKING_WITHIN = re.compile(
    r"\b(?:can|could|may) i (?:take|have|get|grab|start with|ask for|confirm|check)\b", re.I
)


@dataclass
class _Asked:
    tokens: frozenset[str]
    occurrences: list[tuple[int, str]] = field(default_factory=list)
    exact: bool = True

    @property
    def slots(self) -> frozenset[str]:
        return frozenset(_SLOTS[t] for t in self.tokens if t in _SLOTS)


def _ask_part(clause: str, *, asked_with_mark: bool) -> str:
    """A question without a '?' from where it starts asking ("the card's now cancelled do you
    still have the card" -> "do you still have the card"); any other clause whole."""
    m = None if asked_with_mark else _ASKING.match(clause)
    if m is None:
        return clause
    group = next(g for g in ("wh", "aux", "is") if m.group(g))
    return clause[m.start(group) :]


def _stem(word: str) -> str:
    """'suits' -> 'suit', 'numbers' -> 'number' ('address' stays)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(question: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(question) if w not in _FILLER)


def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _reworded(tokens: frozenset[str], earlier: _Asked, answers: frozenset[str]) -> bool:
    """Asks for the same detail in other words: the same slots, some shared words, and nothing
    taken from the customer's answers since (that would be a narrower follow-up: "Which date
    in March?")."""
    slots = frozenset(_SLOTS[t] for t in tokens if t in _SLOTS)
    return bool(
        slots
        and slots == earlier.slots
        and _similarity(tokens, earlier.tokens) >= _REWORDED
        and not (tokens - earlier.tokens) & answers
    )


class RepeatedQuestion(Check):
    """Guarantees: a question asked in one turn and asked again (same content words after
    dropping politeness and question words and a plural 's', Jaccard >= 0.8) in a later turn
    yields one finding per question: minor when asked twice, major when asked three or more
    times; evidence quotes every occurrence. A combined question ("Which service would you
    like, and could you tell me your name?") is split into its clauses first, so a question
    repeated inside a longer one counts; a question without a '?' (a voice transcript) or a
    request ("Please enter your name.") counts too. A reworded re-ask of the same detail (a
    shared slot such as the party size or contact number, Jaccard >= 0.3) counts unless it
    takes a word from the customer's answers since (a narrower follow-up)."""

    check_id = "repeated_question"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        asked: list[_Asked] = []
        said: dict[int, frozenset[str]] = {}  # turn -> the customer's words up to that turn
        customer: frozenset[str] = frozenset()
        for turn in case.turns:
            customer |= _tokens(turn.customer)
            said[turn.index] = customer
            matched_this_turn: set[int] = set()
            questions = question_sentences(turn.reply)
            asks = [
                _ask_part(c.text, asked_with_mark=s in questions)
                for s in split_sentences(turn.reply)
                for c in clauses(s)
                if s in questions or ASKS.match(c.text) or _ASKING.match(c.text)
            ]
            asks += [
                c.text[m.start() :]
                for s in split_sentences(turn.reply)
                if s not in questions
                for c in clauses(s)
                if not (ASKS.match(c.text) or _ASKING.match(c.text))
                and (m := _ASKING_WITHIN.search(c.text))
            ]
            for clause in asks:
                tokens = _tokens(clause)
                if not tokens:
                    continue  # "Sorry?" carries nothing to compare
                for i, earlier in enumerate(asked):
                    if i in matched_this_turn or earlier.occurrences[-1][0] == turn.index:
                        continue
                    score = _similarity(tokens, earlier.tokens)
                    # What the customer said after the earlier question was asked.
                    answers = customer - said[earlier.occurrences[-1][0]]
                    contained = (tokens <= earlier.tokens or earlier.tokens <= tokens) and min(
                        len(tokens), len(earlier.tokens)
                    ) >= 2
                    if (
                        score >= _SIMILAR
                        or (contained and score >= 0.6)
                        or _reworded(tokens, earlier, answers)
                    ):
                        earlier.occurrences.append((turn.index, clause))
                        earlier.exact = earlier.exact and score == 1.0
                        matched_this_turn.add(i)
                        break
                else:
                    asked.append(_Asked(tokens, [(turn.index, clause)]))
        findings: list[Finding] = []
        for question in asked:
            count = len(question.occurrences)
            if count < 2:
                continue
            first_text = question.occurrences[0][1]
            findings.append(
                self.finding(
                    case,
                    severity="major" if count >= 3 else "minor",
                    turn_index=question.occurrences[-1][0],
                    subject=first_text[:200],
                    evidence=[
                        Evidence(source="reply", quote=text, turn=index)
                        for index, text in question.occurrences
                    ],
                    rationale=f"The responder asked '{first_text}' {count} times.",
                    fix_target="skill",
                    fix_text=(
                        "Have the skill check the fields already collected and the customer's "
                        "previous answers before asking; if an answer was unclear, ask a narrower "
                        "follow-up instead of the same question."
                    ),
                    effort="S",
                    confidence=0.9 if question.exact else 0.7,
                )
            )
        return findings
