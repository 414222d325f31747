"""Check: a reply whose content does not address what the customer just said."""

from __future__ import annotations

import re

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.dialogue_acts import (
    ACCEPTS,
    ASKS_WITHIN,
    content_words,
    declines,
    documents_lines,
    kindred,
    meet,
    proceeds,
    questions,
    statements,
    takes_up,
)
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import split_sentences


class IrrelevantReply(Check):
    """Guarantees: a major finding when the customer asked something (a question with a topic
    word), the reply takes up none of the questions, shares no content word with the customer's
    message, does not decline honestly, and states something (a non-question sentence of at
    least three content words): a canned or off-topic answer. A reply that only asks the next
    intake question is left to `ignored_question`. The evidence quotes the customer's message
    and the reply's first substantive sentence."""

    rule = Rule(
        "irrelevant_reply",
        "major",
        "deterministic",
        "prompt",
        "A reply whose content does not address the customer's last message: a canned "
        "template or an answer about something else.",
        action="Reply to what the customer actually said",
    )

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        previous = ""
        heard = ""  # everything the customer has said so far
        kb = documents_lines(d.text for d in case.fixture.documents)
        for turn in case.turns:
            heard += "\n" + turn.customer
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
            if not asked:
                stated = statements(reply)
                if stated and _ignores_statement(turn.customer, heard, reply, said):
                    findings.append(self._finding(case, turn.index, turn.customer, stated[0].text))
                continue
            if any(takes_up(reply, q, kb=kb) for q in asked):
                continue
            # Words of the questions' sentences, not of a remark beside them: "my daughter
            # failed in a manual" does not make "Sorry your payment failed" relevant.
            if meet(said, frozenset().union(*(q.topic | q.context for q in asked))):
                continue
            stated = statements(reply)
            if not stated:
                continue
            quoted = asked[0].sentence.text
            findings.append(self._finding(case, turn.index, quoted, stated[0].text, asked=True))
        return findings

    def _finding(
        self, case: CaseTranscript, turn: int, quoted: str, stated: str, *, asked: bool = False
    ) -> Finding:
        return self.finding(
            case,
            turn_index=turn,
            subject=stated[:200],
            evidence=[
                Evidence(source="customer", quote=quoted, turn=turn),
                Evidence(source="reply", quote=stated, turn=turn),
            ],
            rationale=(
                f"The customer {'asked' if asked else 'said'} '{quoted}'; the reply talks about "
                "something else and shares none of its words."
            ),
            fix_text=(
                "Make the assistant answer the customer's last message; route unmatched "
                "questions to an honest 'I don't know' instead of a canned template."
            ),
            effort="M",
            confidence=0.7,
        )


# A reply that takes in what the customer said opens by acknowledging it.
_ACKNOWLEDGES = re.compile(
    r"^\W*(?:[\w'\-]+\W+){0,2}?(?:thanks|thank you|cheers|got it|noted|great|perfect|lovely|"
    r"ok|okay|sure|sorry|apologies|of course|no problem|no worries|"
    r"(?:you're|you are) (?:very |most )?welcome|glad|wonderful|brilliant|excellent|fantastic|"
    r"awesome|understood|i see|i understand|understandable|i hear you|absolutely|will do|done|"
    r"right|fair enough|good to (?:know|hear)|that's (?:great|fine|good|ok)|oh|yes|yeah|no|"
    r"nope|then|so|in that case|if so|enjoy|have a (?:great|good|nice|lovely)|bye|goodbye|"
    r"take care|see you|my pleasure|any ?time|amazing|fab|fabulous|super|cool|nice|totally|"
    r"(?:i )?get it|makes sense|fair point|not necessarily|not really|exactly|correct|"
    r"that's right|(?:good|great) question)\b",
    re.IGNORECASE,
)
_SUBSTANTIAL = 2
_NUMBER = re.compile(r"\d+(?:[:.,]\d+)?")


def _ignores_statement(customer: str, heard: str, reply: str, said: frozenset[str]) -> bool:
    """The customer told the bot something (details, a report, a plan) and the reply neither
    acknowledges it, nor asks for the next detail, nor shares a word with anything the
    customer has said: a canned message ("Want faster speeds? Upgrade today" to "my number is
    0117 496 0321")."""
    told = content_words(customer)
    if len(told) < _SUBSTANTIAL or ACCEPTS.match(customer) or _ACKNOWLEDGES.match(reply):
        return False
    if any(ASKS_WITHIN.search(s.text) for s in split_sentences(reply)):
        return False
    # Kindred words count: "i'll call" is taken up by "You can reach us on ...".
    everything = kindred(content_words(heard))
    # "for about 15 ppl" -> "For 15 people the 8 inch is best": a figure taken up is a word.
    if set(_NUMBER.findall(heard)) & set(_NUMBER.findall(reply)):
        return False
    return not meet(everything, said) and not meet(said, everything)
