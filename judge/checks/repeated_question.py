"""Check: the responder asks the same question again in a later turn."""

from __future__ import annotations

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
        "that this so great thanks thank ok okay now then"
    )
)
_SIMILAR = 0.8


@dataclass
class _Asked:
    tokens: frozenset[str]
    occurrences: list[tuple[int, str]] = field(default_factory=list)
    exact: bool = True


def _stem(word: str) -> str:
    """'suits' -> 'suit', 'numbers' -> 'number' ('address' stays)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(question: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(question) if w not in _FILLER)


def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


class RepeatedQuestion(Check):
    """Guarantees: a question asked in one turn and asked again (same content words after
    dropping politeness and question words and a plural 's', Jaccard >= 0.8) in a later turn
    yields one finding per question: minor when asked twice, major when asked three or more
    times; evidence quotes every occurrence. A combined question ("Which service would you
    like, and could you tell me your name?") is split into its clauses first, so a question
    repeated inside a longer one counts."""

    check_id = "repeated_question"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        asked: list[_Asked] = []
        for turn in case.turns:
            matched_this_turn: set[int] = set()
            asks = [
                s
                for s in split_sentences(turn.reply)
                if s in question_sentences(turn.reply) or ASKS.match(s.text)
            ]
            for clause in (c.text for s in asks for c in clauses(s)):
                tokens = _tokens(clause)
                if not tokens:
                    continue  # "Sorry?" carries nothing to compare
                for i, earlier in enumerate(asked):
                    if i in matched_this_turn or earlier.occurrences[-1][0] == turn.index:
                        continue
                    score = _similarity(tokens, earlier.tokens)
                    if score >= _SIMILAR:
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
