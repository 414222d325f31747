"""Check: a customer question that the next reply neither answers, clarifies nor declines."""

from __future__ import annotations

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.dialogue_acts import documents_lines, left_open, questions, statements
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import split_sentences


class IgnoredQuestion(Check):
    """Guarantees: for each turn, every customer question or implied request (a '?', an
    interrogative opening, or "what would you suggest" / "I need to know ...") with a topic
    word is looked for in that turn's reply (`judge.dialogue_acts.left_open`: the fact kind it
    asks for, shared topic words, a yes/no stance, a suggestion, a clarifying question, or an
    honest decline). One major finding per reply that takes up none of them; the evidence
    quotes the ignored question(s) and the reply's first statement (its first sentence when it
    states nothing), so that the finding merges with an `irrelevant_reply` about the same
    reply (which quotes that statement and, being the more specific diagnosis, wins the tie)
    but not with a finding about another sentence of it (an invented price further on)."""

    rule = Rule(
        "ignored_question",
        "major",
        "deterministic",
        "prompt",
        "A customer question or implied request ('what would you suggest?') that the next "
        "reply neither answers, nor clarifies, nor honestly declines.",
        action="Answer the customer's questions before moving on",
    )

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        kb = documents_lines(d.text for d in case.fixture.documents)
        for turn in case.turns:
            reply = turn.reply.strip()
            if not reply:
                continue
            ignored = left_open(reply, [q for q in questions(turn.customer) if q.topic], kb)
            if not ignored:
                continue
            asked = ignored[0].sentence.text
            opening = statements(reply) or split_sentences(reply)
            findings.append(
                self.finding(
                    case,
                    turn_index=turn.index,
                    subject=asked[:200],
                    evidence=[
                        *(
                            Evidence(source="customer", quote=q.sentence.text, turn=turn.index)
                            for q in ignored
                        ),
                        Evidence(source="reply", quote=opening[0].text, turn=turn.index),
                    ],
                    rationale=(
                        f"The customer asked '{asked}' and the reply neither answers it, asks "
                        "what they mean, nor says honestly that it cannot answer."
                    ),
                    fix_text=(
                        "Tell the assistant to answer every question in the customer's message "
                        "before asking for the next intake field, and to say plainly when it "
                        "does not know."
                    ),
                    effort="S",
                    confidence=0.65,
                )
            )
        return findings
