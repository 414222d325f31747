"""Check: the bot refuses or deflects a request its KB covers (a bot that fails the task)."""

from __future__ import annotations

import re

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.dialogue_acts import meet, questions
from judge.kb_answers import KbAnswer, content_words, gives_answer, kb_answer, kb_index
from judge.refusal import THRESHOLD as REFUSAL_THRESHOLD
from judge.refusal import clauses, negative, refusal_score
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import split_sentences

_QUOTE = 120
# A KB line about the bot itself ("The assistant never diagnoses ..."): an instruction to it.
_ABOUT_THE_BOT = re.compile(
    r"\b(?:the|our|this) (?:assistant|chat ?bot|bot|ai|virtual agent)\b", re.IGNORECASE
)


def _forbids_the_bot(answer: KbAnswer) -> bool:
    """The passage forbids the bot what was asked ("The assistant never diagnoses, prescribes or
    gives medical advice" for "what is your policy on diagnosis?"): a clause about the bot that
    says no and names the question's subject. A bot declining it follows its KB; it does not
    refuse a request the KB covers. (The same passage's other clause, "patients in pain are
    offered an emergency appointment", still answers a request for an appointment.)"""
    if not _ABOUT_THE_BOT.search(answer.quote):
        return False
    return any(
        negative(clause) and meet(answer.question.topic, content_words(clause))
        for clause in clauses(answer.quote)
    )


class RefusedRequest(Check):
    """Guarantees: a reply that refuses or deflects (`judge.refusal.refusal_score` at least
    REFUSAL_THRESHOLD: "I'm sorry, I can't help with that", "please contact the clinic directly", "I
    don't have that information") while the customer's message asks something the case's KB or
    manifest answers (`judge.kb_answers.kb_answer`: a service, a price, a duration, the hours, a
    booking) and the reply gives none of that answer (`gives_answer`) yields one critical
    finding per reply, about the first such question. Refusing what the KB does not cover (a
    medicine, another business's service, a discount) is no finding, nor is an honest "I don't
    know, please call" to a question the KB does not answer, nor declining what the KB forbids
    the bot ("The assistant never diagnoses ...": an instruction it follows). The subject is the reply's most
    refusing sentence, so the same refusal repeated over turns is one finding; the evidence
    quotes the question, that sentence and the passage (or manifest entry) that answers it."""

    rule = Rule(
        "refused_request",
        "critical",
        "deterministic",
        "prompt",
        "A reply refuses or deflects ('I'm sorry, I can't help with that', 'please contact the "
        "clinic directly'; a refusal score of at least {REFUSAL_THRESHOLD}) a request the "
        "case's KB or manifest answers - a service, a price, a duration, the opening hours, a "
        "booking - and gives none of that answer: materially wrong guidance. Declining what "
        "the KB does not cover is no finding.",
        action="Answer and book what the KB covers instead of refusing",
        thresholds={"REFUSAL_THRESHOLD": REFUSAL_THRESHOLD},
    )
    needs = frozenset({"kb"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        kb = case.fixture.text if any(d.text.strip() for d in case.fixture.documents) else ""
        findings: list[Finding] = []
        for turn in case.turns:
            score = refusal_score(turn.reply)
            if score < REFUSAL_THRESHOLD:
                continue
            asked = [q for q in questions(turn.customer) if q.topic]
            if not asked:
                continue
            index = kb_index(kb, manifest.currency)
            for question in asked:
                answer = kb_answer(question, index, manifest)
                if answer is None or _forbids_the_bot(answer):
                    continue
                if not gives_answer(turn.reply, answer, manifest.currency):
                    findings.append(self._finding(case, turn.index, turn.reply, answer, score))
                    break
        return findings

    def _finding(
        self, case: CaseTranscript, turn_index: int, reply: str, answer: KbAnswer, score: float
    ) -> Finding:
        refusing = max(split_sentences(reply), key=lambda s: refusal_score(s.text)).text
        asked = answer.question.sentence.text
        quote = answer.quote if len(answer.quote) <= _QUOTE else answer.quote[:_QUOTE] + "..."
        where = "the KB" if answer.source == "fixture" else "the org's ground truth"
        return self.finding(
            case,
            turn_index=turn_index,
            subject=refusing[:200],
            evidence=[
                Evidence(source="customer", quote=asked, turn=turn_index),
                Evidence(source="reply", quote=refusing, turn=turn_index),
                Evidence(source=answer.source, quote=answer.quote),
            ],
            rationale=(
                f"The customer asked '{asked}', which {where} answers ('{quote}'), and the reply "
                f"refuses or sends them elsewhere ('{refusing}') without giving any of that "
                "answer: the bot fails the task it is there for."
            ),
            fix_text=(
                "Tell the assistant to answer from the KB whatever it covers (services, prices, "
                "durations, opening hours, booking) and to take bookings itself; it may decline "
                "or refer the customer on only for what the KB does not cover."
            ),
            effort="S",
            confidence=round(min(score, 1.0), 2),
        )
