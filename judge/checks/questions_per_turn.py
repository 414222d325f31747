"""Check: replies that ask the customer too many questions at once."""

from __future__ import annotations

import re

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import Sentence, split_sentences

# A '?' inside a link ("https://example.ie/book?service=clean") asks nothing.
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


def question_sentences(reply: str) -> list[Sentence]:
    """Sentences of a reply that ask something (contain a '?' outside a link)."""
    return [s for s in split_sentences(reply) if "?" in _URL.sub("", s.text)]


# More questions than this many times the limit is a major finding.
MAJOR_OVER_LIMIT = 2


class QuestionsPerTurn(Check):
    """Guarantees: a reply with more question sentences than `config.max_questions_per_turn`
    yields a minor finding, more than MAJOR_OVER_LIMIT times the limit a major one; the quote
    spans the reply from its first to its last question."""

    rule = Rule(
        "questions_per_turn",
        "minor",
        "deterministic",
        "skill",
        "A reply asks more questions than the limit (the preset's max_questions_per_turn).",
        action="Ask fewer questions per reply",
        severity_when={"major": "over {MAJOR_OVER_LIMIT} times the limit"},
        thresholds={"MAJOR_OVER_LIMIT": MAJOR_OVER_LIMIT},
    )

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        limit = config.max_questions_per_turn
        findings: list[Finding] = []
        for turn in case.turns:
            questions = question_sentences(turn.reply)
            if len(questions) <= limit:
                continue
            quote = turn.reply[questions[0].start : questions[-1].end]
            findings.append(
                self.finding(
                    case,
                    severity="major" if len(questions) > MAJOR_OVER_LIMIT * limit else "minor",
                    turn_index=turn.index,
                    subject=quote[:200],
                    key=f"more than {limit} questions per reply",
                    evidence=[Evidence(source="reply", quote=quote, turn=turn.index)],
                    rationale=(
                        f"The reply asks {len(questions)} questions at once; the limit is {limit}."
                    ),
                    fix_text=(
                        f"Tell the intake skill to ask at most {limit} question(s) per message "
                        "and to ask for the most important missing field first."
                    ),
                    effort="S",
                    confidence=1.0,
                )
            )
        return findings
