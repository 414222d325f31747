"""Check: a reply whose content does not address what the customer just said."""

from __future__ import annotations

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.dialogue_acts import (
    ACCEPTS,
    content_words,
    declines,
    meet,
    proceeds,
    questions,
    statements,
    takes_up,
)
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig


class IrrelevantReply(Check):
    """Guarantees: a major finding when the customer asked something (a question with a topic
    word), the reply takes up none of the questions, shares no content word with the customer's
    message, does not decline honestly, and states something (a non-question sentence of at
    least three content words): a canned or off-topic answer. A reply that only asks the next
    intake question is left to `ignored_question`. The evidence quotes the customer's message
    and the reply's first substantive sentence."""

    check_id = "irrelevant_reply"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        previous = ""
        for turn in case.turns:
            reply = turn.reply.strip()
            asked = [q for q in questions(turn.customer) if q.topic]
            earlier, previous = previous, reply
            # A reply that gets on with the booking, or goes on with what the customer just
            # accepted ("yes please" to registering), leaves the question ignored, not the reply
            # irrelevant (`ignored_question` reports that).
            if not reply or declines(reply) or proceeds(reply, strictly=True):
                continue
            if (
                ACCEPTS.match(turn.customer)
                and len(meet(content_words(reply), content_words(earlier))) >= 2
            ):
                continue
            said = content_words(reply)
            if not asked or any(takes_up(reply, q) for q in asked):
                continue
            # Words of the questions' sentences, not of a remark beside them: "my daughter
            # failed in a manual" does not make "Sorry your payment failed" relevant.
            if meet(said, frozenset().union(*(q.topic | q.context for q in asked))):
                continue
            stated = statements(reply)
            if not stated:
                continue
            quoted = asked[0].sentence.text
            findings.append(
                self.finding(
                    case,
                    severity="major",
                    turn_index=turn.index,
                    subject=stated[0].text[:200],
                    evidence=[
                        Evidence(source="customer", quote=quoted, turn=turn.index),
                        Evidence(source="reply", quote=stated[0].text, turn=turn.index),
                    ],
                    rationale=(
                        f"The customer asked '{quoted}'; the reply "
                        "talks about something else and shares none of its words."
                    ),
                    fix_target="prompt",
                    fix_text=(
                        "Make the assistant answer the customer's last message; route unmatched "
                        "questions to an honest 'I don't know' instead of a canned template."
                    ),
                    effort="M",
                    confidence=0.7,
                )
            )
        return findings
