"""Check: replies that state a fact the manifest contradicts (a service's price or duration, an
open or closed day, a day's opening or closing time, a listed service denied, a wrong contact)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from generator.schemas import Manifest, ManifestHours, ManifestService
from judge.checks.base import Check, Rule
from judge.claims import (
    ABOUT_MINUTES,
    ABOUT_SHARE,
    WEEKDAYS,
    DayClaim,
    OfferClaim,
    ServiceClaim,
    day_claims,
    day_label,
    duration_matches,
    manifest_days,
    reply_statements,
    service_claims,
)
from judge.facts import SupportIndex, extract_facts, money_text, phones_match, url_host
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import Sentence, quote_around, sentence_at, split_sentences
from qalab.domain import FixTarget

# A contact detail is the business's own when the words just before it say so.
_OWN_CONTACT = re.compile(
    r"\b(?:our|us|we|reception|the practice|the clinic|the office|the team|website|site|web|"
    r"email|e-mail|mail|phone|call|ring|number|line)\b[^.!?\n]{0,30}$",
    re.IGNORECASE,
)
_YOUR = re.compile(r"\byour\b[^.!?\n]{0,25}$", re.IGNORECASE)
_CONTACT_KINDS = {"phone": "phone", "email": "email", "url": "website"}


@dataclass(frozen=True)
class Contradiction:
    """One contradicted fact: what the reply said vs what the manifest holds."""

    subject: str
    said: str
    truth: str
    sentence: Sentence
    start: int
    end: int
    in_kb: bool
    confidence: float
    derived: bool = False


def price_matches(amount: Decimal, service: ManifestService) -> bool:
    """The amount is the service's price: its exact price, a price within its range, or at
    least its "from" price."""
    if service.price_kind == "range" and service.price_max is not None:
        return service.price <= amount <= service.price_max
    if service.price_kind == "from":
        return amount >= service.price
    return amount == service.price


def _price_truth(service: ManifestService, currency: str) -> str:
    low = f"{money_text(service.price)} {currency}"
    if service.price_kind == "range" and service.price_max is not None:
        return f"{money_text(service.price)}-{money_text(service.price_max)} {currency}"
    return f"from {low}" if service.price_kind == "from" else low


def _duration_holds(claim: ServiceClaim, service: ManifestService) -> bool:
    """The claimed minutes are the service's, or within its range ('about' allows 25%)."""
    low, high = service.duration_minutes or 0, service.duration_max_minutes
    if high is not None and low <= claim.amount <= high:
        return True
    return any(duration_matches(claim.amount, m, claim.approximate) for m in (low, high) if m)


def _duration_truth(service: ManifestService) -> str:
    if service.duration_max_minutes is not None:
        return f"{service.duration_minutes}-{service.duration_max_minutes} min"
    return f"{service.duration_minutes} min"


def _time_text(times: frozenset[str]) -> str:
    return " / ".join(sorted(times))


class ContradictsManifest(Check):
    """Guarantees: a reply that ties a price or duration to a manifest service that differs
    from it (format-insensitive: 80 EUR = €80 = 80,00 €; 'about' a duration allows the larger of
    ABOUT_MINUTES and ABOUT_SHARE of it), says the business is open on a day the manifest has
    no hours for (or closed on one it has), gives a day an opening or closing time the manifest
    does not (8.30 = 08:30), denies offering a manifest service, or gives a phone, email or
    website as the business's own that is not the manifest's, yields one critical finding per
    contradicted subject per turn, quoting the reply sentence. A bare "Yes"/"No" to the
    customer's single question counts as stating it. Fix target: the prompt, the KB when the
    fixture itself states the contradicting value (see `rule`)."""

    rule = Rule(
        "contradicts_manifest",
        "critical",
        "deterministic",
        "prompt",
        "A reply gives a service's price or duration, a day's opening or closing time, an open "
        "or closed day, a denial of a listed service, or a phone, email or website as the "
        "business's own that contradict the manifest (the ground truth). 'About' a duration "
        "allows the larger of {ABOUT_MINUTES} min and {ABOUT_SHARE:.0%} of it.",
        action="Correct the prices, durations and hours that contradict the ground truth",
        fix_target_when={
            "kb": "when the case's KB fixture itself states the contradicting value (the reply "
            "repeats the KB; correct the KB)"
        },
        thresholds={"ABOUT_MINUTES": ABOUT_MINUTES, "ABOUT_SHARE": float(ABOUT_SHARE)},
    )
    needs = frozenset({"org"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        kb = case.fixture.text
        kb_services = {
            (c.kind, name, c.amount)
            for c in service_claims(kb, manifest)
            if c.service
            for name in c.services
        }
        kb_days = {(c.kind, c.day, c.is_open, t) for c in day_claims(kb) for t in c.times or {""}}
        kb_facts = SupportIndex(default_currency=manifest.currency)
        kb_facts.add_text(kb)
        hours = manifest_days(manifest)
        findings: list[Finding] = []
        said_by_customer = SupportIndex(default_currency=manifest.currency)
        for turn in case.turns:
            said_by_customer.add_text(turn.customer)
            statements = reply_statements(turn.customer, turn.reply, manifest)
            found: list[Contradiction] = []
            for claim in statements.services:
                found += self._service(claim, manifest, kb_services)
            found += self._days(statements.days, hours, kb_days)
            for offer in statements.offers:
                found += self._offer(offer, kb)
            found += self._contacts(turn.reply, manifest, kb_facts, said_by_customer)
            reported: set[str] = set()
            for item in found:
                if item.subject in reported:
                    continue
                reported.add(item.subject)
                findings.append(self._finding(case, turn.index, turn.reply, item))
        return findings

    # ------------------------------------------------------------------ rules

    def _service(
        self,
        claim: ServiceClaim,
        manifest: Manifest,
        kb_services: set[tuple[str, str, Decimal]],
    ) -> list[Contradiction]:
        truths = [s for s in manifest.services if s.name in claim.services]
        if claim.kind == "price":
            if any(price_matches(claim.amount, s) for s in truths):
                return []
            said = f"{money_text(claim.amount)} {manifest.currency}"
            truth = " or ".join(_price_truth(s, manifest.currency) for s in truths)
        else:
            # A duration the org describes in words ("2 visits") has no minutes to contradict.
            timed = [s for s in truths if s.duration_minutes is not None]
            if not timed or any(_duration_holds(claim, s) for s in timed):
                return []
            said = f"{money_text(claim.amount)} min"
            truth = " or ".join(_duration_truth(s) for s in timed)
        names = " / ".join(sorted(claim.services))
        in_kb = any((claim.kind, n, claim.amount) in kb_services for n in claim.services)
        return [
            Contradiction(
                subject=f"{claim.kind} of {names}: {said}",
                said=f"the {claim.kind} of {names} is {said}",
                truth=f"the manifest says {truth}",
                sentence=claim.sentence,
                start=claim.start,
                end=claim.end,
                in_kb=in_kb,
                confidence=0.9 if len(claim.services) == 1 else 0.8,
                derived=claim.derived,
            )
        ]

    def _days(
        self,
        claims: list[DayClaim],
        hours: dict[int, ManifestHours],
        kb_days: set[tuple[str, int, bool, str]],
    ) -> list[Contradiction]:
        # One contradiction per (kind, value, clause), listing every day it is wrong for.
        groups: dict[tuple[str, str, int, int], list[DayClaim]] = {}
        for claim in claims:
            line = hours.get(claim.day)
            if claim.kind == "open":
                wrong = claim.is_open != (line is not None)
                value = "open" if claim.is_open else "closed"
            elif line is None:
                wrong = False  # an hours line for a closed day: the "open" claim reports it
                value = ""
            else:
                truth = line.opens if claim.kind == "opens" else line.closes
                wrong = truth not in claim.times
                value = _time_text(claim.times)
            if wrong:
                groups.setdefault((claim.kind, value, claim.start, claim.end), []).append(claim)
        out: list[Contradiction] = []
        for (kind, value, _, _), group in groups.items():
            days = [c.day for c in group]
            label = day_label(days)
            first = group[0]
            if kind == "open":
                truths = [
                    f"{WEEKDAYS[d]} {hours[d].opens}-{hours[d].closes}"
                    if d in hours
                    else f"closed on {WEEKDAYS[d]}"
                    for d in days
                ]
                said = f"is {value} on {label}"
                in_kb = any(("open", c.day, c.is_open, "") in kb_days for c in group)
            else:
                verb = "opens" if kind == "opens" else "closes"
                truths = [
                    f"{WEEKDAYS[d]} {verb} at "
                    f"{hours[d].opens if kind == 'opens' else hours[d].closes}"
                    for d in days
                ]
                said = f"{verb} at {value} on {label}"
                in_kb = any((kind, c.day, True, t) in kb_days for c in group for t in c.times)
            out.append(
                Contradiction(
                    subject=f"hours: {said.removeprefix('is ')}",
                    said=f"the business {said}",
                    truth="the manifest says " + "; ".join(truths),
                    sentence=first.sentence,
                    start=first.start,
                    end=first.end,
                    in_kb=in_kb,
                    confidence=0.9 if kind == "open" else 0.85,
                    derived=first.derived,
                )
            )
        return out

    def _offer(self, offer: OfferClaim, kb: str) -> list[Contradiction]:
        if offer.offered or offer.service is None:
            return []
        return [
            Contradiction(
                subject=f"offer: {offer.service} not offered",
                said=f"{offer.service} is not offered",
                truth=f"the manifest lists {offer.service} as a service",
                sentence=offer.sentence,
                start=offer.start,
                end=offer.end,
                in_kb=False,
                confidence=0.8,
                derived=offer.derived,
            )
        ]

    def _contacts(
        self,
        reply: str,
        manifest: Manifest,
        kb_facts: SupportIndex,
        customer: SupportIndex,
    ) -> list[Contradiction]:
        known = {
            kind: [c.value for c in manifest.contacts if c.kind == contact_kind]
            for kind, contact_kind in _CONTACT_KINDS.items()
        }
        out: list[Contradiction] = []
        for fact in extract_facts(reply, default_currency=manifest.currency):
            truths = known.get(fact.kind)
            if not truths or customer.supports(fact):
                continue  # not a contact kind the manifest has, or the customer's own detail
            # A contact the ground truth's own policies give is the business's too (an emergency
            # or out-of-hours line beside the main phone): saying it is no contradiction.
            if any(self._same_contact(fact.kind, fact.value, p.text) for p in manifest.policies):
                continue
            before = reply[max(0, fact.start - 45) : fact.start]
            if not _OWN_CONTACT.search(before) or _YOUR.search(before):
                continue
            if any(self._same_contact(fact.kind, fact.value, t) for t in truths):
                continue
            sentence = sentence_at(split_sentences(reply), fact.start) or Sentence(
                fact.start, fact.end, reply[fact.start : fact.end]
            )
            out.append(
                Contradiction(
                    subject=f"contact {fact.key}",
                    said=f"the business's {_CONTACT_KINDS[fact.kind]} is "
                    f"{reply[fact.start : fact.end]}",
                    truth=f"the manifest says {' or '.join(truths)}",
                    sentence=sentence,
                    start=fact.start,
                    end=fact.end,
                    in_kb=kb_facts.supports(fact),
                    confidence=0.9,
                )
            )
        return out

    @staticmethod
    def _same_contact(kind: str, value: str, truth: str) -> bool:
        facts = [f for f in extract_facts(truth, lenient=True) if f.kind == kind]
        if kind == "phone":
            return any(phones_match(value, f.value) for f in facts)
        if kind == "url":
            return any(url_host(value) == url_host(f.value) for f in facts)
        return any(value == f.value for f in facts)

    # ------------------------------------------------------------------ finding

    def _finding(
        self, case: CaseTranscript, turn_index: int, reply: str, item: Contradiction
    ) -> Finding:
        quote = quote_around(reply, item.sentence, item.start, item.end)
        how = (
            "answers the customer's question with a bare yes/no that says"
            if item.derived
            else "says"
        )
        if item.in_kb:
            target: FixTarget = "kb"
            fix = (
                f"The fixture KB itself states that {item.said}; correct the KB document so it "
                f"matches the ground truth ({item.truth.removeprefix('the manifest says ')})."
            )
        else:
            target = "prompt"
            fix = (
                "Instruct the responder to state prices, durations, opening days and hours and "
                "contact details only exactly as the KB gives them for that service or day, "
                "and to say it will check with the team when unsure."
            )
        # What the reply said, verbatim; the fingerprint keeps the canonical subject.
        said = reply[item.start : item.end].strip()
        return self.finding(
            case,
            turn_index=turn_index,
            subject=said if said and said in quote else quote[:200],
            key=item.subject,
            evidence=[Evidence(source="reply", quote=quote, turn=turn_index)],
            rationale=f"The reply {how} {item.said}, but {item.truth}.",
            fix_target=target,
            fix_text=fix,
            effort="S",
            confidence=item.confidence * (0.9 if item.derived else 1.0),
        )
