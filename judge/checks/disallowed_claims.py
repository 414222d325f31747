"""Check: replies that make a claim the manifest lists as disallowed (discounts, guarantees...)."""

from __future__ import annotations

import re

from generator.schemas import DisallowedClaim, Manifest
from judge.checks.base import Check, Rule
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import Sentence, quote_around, split_sentences, words
from qalab.domain import Severity

_DISCOUNT = re.compile(
    r"\b(?:discounts?|discounted|\d+\s?% off|percent off|half[- ]price|free of charge|for free"
    r"|complimentary|vouchers?|coupons?|promo(?:tion)?(?: code)?s?|special offers?)\b",
    re.IGNORECASE,
)
_GUARANTEE = re.compile(
    r"\b(?:guarantee[ds]?|guaranteeing|100% (?:safe|painless|success\w*)|pain[- ]free|risk[- ]free"
    r"|always works|will definitely|permanent results)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:no|not|never|cannot|unfortunately|unable)\b|n't\b|n’t\b", re.IGNORECASE
)
# Clause breaks: punctuation and quote marks, but not the apostrophe inside "don't".
_CLAUSE_BREAK = re.compile(r"[,;:.!?\"“”()]|(?<!\w)'|'(?!\w)")


def _negated(text: str, start: int, end: int) -> bool:
    """A negation in the clause around text[start:end] (clauses end at , ; : and quotes)."""
    breaks = [m.start() for m in _CLAUSE_BREAK.finditer(text)]
    left = max((b for b in breaks if b < start), default=-1) + 1
    right = min((b for b in breaks if b >= end), default=len(text))
    return bool(_NEGATION.search(text[left:right]))


# Sending the customer elsewhere for something names it without claiming to offer it.
_REFERRAL = re.compile(
    r"\b(?:specialist|elsewhere|another (?:practice|clinic|dentist)|refer(?:ral|red)?|referring)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"(?<!\w)'([^']{3,})'(?!\w)|\"([^\"]{3,})\"|“([^”]{3,})”")
# Words of a claim's description that say nothing about its content.
_GENERIC = frozenset(
    words(
        "claim claims claiming claimed offer offers offering offered provide provides providing "
        "says saying stating states state responder assistant practice business service services "
        "available customer customers patient patients clinic company mention mentions mentioning "
        "invented invent fabricated false any which that there their about other there these those "
        "should must would could never being having"
    )
)
_LEXICONS = {"invented_discount": _DISCOUNT, "guarantee": _GUARANTEE}


def _claim_terms(claim: DisallowedClaim, kb_words: set[str]) -> list[str]:
    """Distinctive words of a claim: long, not generic and absent from the KB."""
    return sorted(
        {w for w in words(claim.text) if len(w) >= 5 and w not in _GENERIC and w not in kb_words}
    )


class DisallowedClaims(Check):
    """Guarantees: a reply sentence that (without negation) uses discount or guarantee language
    absent from the fixture, or a manifest claim's quoted phrase, yields a critical finding; a
    sentence that only shares a distinctive KB-external word with a manifest claim yields a major
    finding of lower confidence (a heuristic alone never gates the run), unless the sentence
    refers the customer elsewhere ("a specialist", "refer you")."""

    rule = Rule(
        "disallowed_claims",
        "critical",
        "deterministic",
        "prompt",
        "A claim the manifest lists as fabricated: invented discounts, guarantees, services not "
        "offered, wrong hours.",
        action="Stop making claims the business does not allow",
        severity_when={
            "major": "for a weaker word-level match (a distinctive word shared with a listed "
            "claim, lower confidence)"
        },
    )
    needs = frozenset({"org"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        kb_text = case.fixture.text.casefold()
        kb_words = set(words(kb_text))
        by_kind = {c.kind: c for c in manifest.disallowed_claims}
        findings: list[Finding] = []
        for turn in case.turns:
            reported: set[str] = set()
            for sentence in split_sentences(turn.reply):
                for kind, lexicon in _LEXICONS.items():
                    # "we don't offer discounts" is the right answer, not a claim; negation
                    # counts within the term's own clause, so a refusal quoted earlier in the
                    # sentence does not hide "..., 50% off is confirmed".
                    match = next(
                        (
                            m
                            for m in lexicon.finditer(sentence.text)
                            if not _negated(sentence.text, m.start(), m.end())
                        ),
                        None,
                    )
                    if match and match.group(0).casefold() not in kb_text:
                        claim = by_kind.get(kind)
                        subject = claim.id if claim else kind
                        self._add(
                            findings,
                            reported,
                            case,
                            turn.index,
                            turn.reply,
                            sentence,
                            subject,
                            match.group(0),
                            "critical",
                            0.8,
                            claim,
                        )
                if _NEGATION.search(sentence.text):
                    continue  # the phrase and word heuristics below keep the sentence scope
                for claim in manifest.disallowed_claims:
                    phrases = [
                        p for p in _QUOTED.findall(claim.text) if p.casefold() not in kb_text
                    ]
                    hit = next(
                        (p for p in phrases if p.casefold() in sentence.text.casefold()), None
                    )
                    if hit:
                        self._add(
                            findings,
                            reported,
                            case,
                            turn.index,
                            turn.reply,
                            sentence,
                            claim.id,
                            hit,
                            "critical",
                            0.9,
                            claim,
                        )
                        continue
                    if claim.kind in _LEXICONS or claim.kind == "wrong_hours":
                        continue  # covered by the lexicons above and by unsupported_facts
                    if _REFERRAL.search(sentence.text):
                        continue  # "you'd need a specialist for Invisalign" offers nothing
                    said = set(words(sentence.text))
                    terms = [t for t in _claim_terms(claim, kb_words) if t in said]
                    if terms:
                        self._add(
                            findings,
                            reported,
                            case,
                            turn.index,
                            turn.reply,
                            sentence,
                            claim.id,
                            terms[0],
                            "major",
                            0.6,
                            claim,
                        )
        return findings

    def _add(
        self,
        findings: list[Finding],
        reported: set[str],
        case: CaseTranscript,
        turn_index: int,
        reply: str,
        sentence: Sentence,
        subject: str,
        term: str,
        severity: Severity,
        confidence: float,
        claim: DisallowedClaim | None,
    ) -> None:
        if subject in reported:
            return  # one finding per claim per turn
        reported.add(subject)
        start = sentence.start + sentence.text.casefold().find(term.casefold())
        described = f" ({claim.text})" if claim else ""
        quote = quote_around(reply, sentence, start, start + len(term))
        said = reply[start : start + len(term)]
        findings.append(
            self.finding(
                case,
                severity=severity,
                turn_index=turn_index,
                # The words the reply used; the fingerprint keys the claim.
                subject=said if said.casefold() == term.casefold() else quote[:200],
                key=subject,
                evidence=[Evidence(source="reply", quote=quote, turn=turn_index)],
                rationale=(
                    f"The reply says '{term}', a disallowed claim{described} that the KB does "
                    "not support."
                ),
                fix_text=(
                    "Add an explicit rule to the responder prompt: never offer discounts, free "
                    "services, guarantees or services that are not in the KB; say what the KB "
                    "does offer instead."
                ),
                effort="S",
                confidence=confidence,
            )
        )
