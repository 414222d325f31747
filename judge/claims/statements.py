"""Everything one reply states, and what a bare "Yes"/"No" opening states of the
customer's one question."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.schemas import Manifest
from judge.claims.days import DayClaim, day_claims
from judge.claims.offers import OfferClaim, offer_claims
from judge.claims.services import ServiceClaim, service_claims
from judge.text import Sentence, split_sentences

_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|absolutely|correct|that's right|that is right|indeed)\b",
    re.IGNORECASE,
)
_NO = re.compile(
    r"^\W*(?:no|nope|sorry,? no|i'?m afraid not|unfortunately,? not|not really)\b"
    r"(?!\s+(?:problem|worries|bother|need|rush|matter))",
    re.IGNORECASE,
)


# "Is that right?" / "is it true?": a short question about what the customer just said.
_ANAPHORIC = re.compile(r"^(?=(?:\W*\w+){1,6}\W*$).*\b(?:that|this|it)\b", re.IGNORECASE)


def answer_polarity(reply: str) -> bool | None:
    """A reply that opens with a plain yes (True) or no (False); None otherwise."""
    head = reply.strip()[:40]
    if _YES.match(head):
        return True
    if _NO.match(head):
        return False
    return None


def the_question(customer: str) -> str | None:
    """The customer's single question sentence, or None if they asked none or several."""
    questions = [s.text for s in split_sentences(customer) if "?" in s.text]
    return questions[0] if len(questions) == 1 else None


def first_sentence(reply: str) -> Sentence | None:
    sentences = split_sentences(reply)
    return sentences[0] if sentences else None


@dataclass(frozen=True)
class Statements:
    """What one reply states; a claim's `derived` flag marks a bare yes/no to a question."""

    services: list[ServiceClaim]
    days: list[DayClaim]
    offers: list[OfferClaim]


def reply_statements(customer: str, reply: str, manifest: Manifest) -> Statements:
    """The reply's own statements, plus those a bare "Yes"/"No" makes of the customer's one
    question ("Are you open on Sunday?" - "Yes!" states open on Sunday), quoted by the reply's
    first sentence. Derived statements never override what the reply says itself."""
    services = service_claims(reply, manifest)
    days = day_claims(reply)
    offers = offer_claims(reply, manifest)
    polarity = answer_polarity(reply)
    question = the_question(customer)
    head = first_sentence(reply)
    if polarity is None or question is None or head is None:
        return Statements(services, days, offers)
    said_days = {c.day for c in days if c.kind == "open"}
    # "My friend said it's 50 euro. Is that right?": the question leans on the sentence before.
    context = customer if _ANAPHORIC.match(question) else question
    asked_days = day_claims(question, include_questions=True) or day_claims(
        context, include_questions=True
    )
    for day in asked_days:
        if day.kind == "open" and day.day not in said_days:
            is_open = day.is_open if polarity else not day.is_open
            days.append(
                DayClaim("open", day.day, is_open, frozenset(), head.start, head.end, head, True)
            )
    if polarity:
        said_services = {(c.kind, c.services) for c in services}
        asked = service_claims(question, manifest) or service_claims(context, manifest)
        for service in asked:
            if service.service and (service.kind, service.services) not in said_services:
                services.append(
                    ServiceClaim(
                        service.kind,
                        service.services,
                        service.amount,
                        service.approximate,
                        head.start,
                        head.end,
                        head,
                        True,
                    )
                )
    said_offers = {c.subject for c in offers}
    for offer in offer_claims(question, manifest, include_questions=True):
        if offer.subject not in said_offers:
            offers.append(
                OfferClaim(
                    offer.offered == polarity,
                    offer.service,
                    offer.words,
                    head.start,
                    head.end,
                    head,
                    True,
                )
            )
    return Statements(services, days, offers)
