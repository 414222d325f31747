"""Statements a text makes about the business, found by rules: a service's price or duration, a
day being open or closed, a day's opening or closing time, a service (not) being offered.

Shared by `contradicts_manifest` (statements vs the manifest) and `self_contradiction`
(statements vs earlier statements). Every statement keeps its sentence and a span, so checks
quote the text literally. Recognition is deliberately conservative: a value is tied to a service
or day only when the clause says so; anything ambiguous yields no statement rather than a guess.

The package: `segments` (the clauses of a sentence), `services` (service names, prices and
durations), `days` (open and closed days, opening and closing times), `offers` (services offered
or not) and `statements` (all of one reply's statements, with a bare yes/no read against the
customer's question).
"""

from __future__ import annotations

from judge.claims.days import (
    WEEKDAYS,
    DayClaim,
    DayMention,
    day_claims,
    day_label,
    day_mentions,
    day_number,
    manifest_days,
)
from judge.claims.offers import OfferClaim, content_stems, offer_claims
from judge.claims.segments import Segment, segments
from judge.claims.services import (
    ABOUT_MINUTES,
    ABOUT_SHARE,
    Mention,
    ServiceClaim,
    ServiceNames,
    duration_matches,
    names_of,
    service_claims,
    service_mentions,
    service_names,
    stem,
)
from judge.claims.statements import (
    Statements,
    answer_polarity,
    first_sentence,
    reply_statements,
    the_question,
)

__all__ = [
    "ABOUT_MINUTES",
    "ABOUT_SHARE",
    "WEEKDAYS",
    "DayClaim",
    "DayMention",
    "Mention",
    "OfferClaim",
    "Segment",
    "ServiceClaim",
    "ServiceNames",
    "Statements",
    "answer_polarity",
    "content_stems",
    "day_claims",
    "day_label",
    "day_mentions",
    "day_number",
    "duration_matches",
    "first_sentence",
    "manifest_days",
    "names_of",
    "offer_claims",
    "reply_statements",
    "segments",
    "service_claims",
    "service_mentions",
    "service_names",
    "stem",
    "the_question",
]
