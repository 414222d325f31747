"""Check: a customer question that the next reply neither answers, clarifies nor declines."""

from __future__ import annotations

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.dialogue_acts import questions, takes_up
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig


class IgnoredQuestion(Check):
    """Guarantees: for each turn, every customer question or implied request (a '?', an
    interrogative opening, or "what would you suggest" / "I need to know ...") with a topic
    word is looked for in that turn's reply (`judge.dialogue_acts.takes_up`: the fact kind it
    asks for, shared topic words, a yes/no stance, a suggestion, a clarifying question, or an
    honest decline). One major finding per reply that takes up none of them; the evidence
    quotes the ignored question(s) and the reply's first sentence."""

    check_id = "ignored_question"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        for turn in case.turns:
            reply = turn.reply.strip()
            if not reply:
                continue
            ignored = [q for q in questions(turn.customer) if q.topic and not takes_up(reply, q)]
            if not ignored:
                continue
            asked = ignored[0].sentence.text
            findings.append(
                self.finding(
                    case,
                    severity="major",
                    turn_index=turn.index,
                    subject=asked[:200],
                    evidence=[
                        *(
                            Evidence(source="customer", quote=q.sentence.text, turn=turn.index)
                            for q in ignored
                        ),
                        Evidence(source="reply", quote=reply, turn=turn.index),
                    ],
                    rationale=(
                        f"The customer asked '{asked}' and the reply neither answers it, asks "
                        "what they mean, nor says honestly that it cannot answer."
                    ),
                    fix_target="prompt",
                    fix_text=(
                        "Tell the assistant to answer every question in the customer's message "
                        "before asking for the next intake field, and to say plainly when it "
                        "does not know."
                    ),
                    effort="S",
                    confidence=0.75,
                )
            )
        return findings
