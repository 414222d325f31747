"""Hand-built judge inputs: the demo org's manifest, a noisy fixture, blueprints and transcripts."""

from __future__ import annotations

from functools import cache

from generator.schemas import (
    Blueprint,
    DisallowedClaim,
    Fixture,
    FixtureDocument,
    Manifest,
    ManifestContact,
    ManifestHours,
    ManifestInstruction,
    ManifestIntakeField,
    ManifestPolicyFact,
    ManifestService,
    Persona,
)
from judge.schemas import CaseTranscript, Evidence, JudgeConfig, Turn
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder

# The demo KB rewritten the way a messy fixture spells it: mixed money, time and phone formats.
NOISY_KB = """\
Harbour Lane Dental -- prices (all in euro, incl VAT)
check-up & exam ...... EUR 65 / 30 min
Hygiene clean  80€   45min
tooth coloured filling €120 (one surface) 45 min
teeth whitening 350.00 - 90 minutes
emergency appt 95 eur, 30 mins
child check up (under 12) 40 EUR 20 min
mouthguard fitting EUR150 - 30 min
opening hrs: mon-thu 8.30 - 18.00 , fri 8:30-16:00, sat 09:00 to 13:00. sun closed
call us +35315550142 or mail hello@harbourlanedental.ie
web https://harbourlanedental.ie
cancel with less than 24 hours notice = fee of 30 EUR
reception confirms by phone within one working day
"""

DEFAULT_FACTS = {
    "full_name": "Mary O'Brien",
    "phone": "+353 87 123 4567",
    "email": "mary.obrien@example.com",
    "service": "Hygiene clean",
    "preferred_date": "2026-03-15",
    "preferred_time": "10:30",
}


@cache
def demo_manifest() -> Manifest:
    """The ground-truth manifest of the demo org, built from its org folder."""
    org = load_org_folder(DEMO_ORG_DIR)
    src = "org.yaml"
    return Manifest(
        org_slug=org.slug,
        org_name=org.name,
        currency=org.currency,
        services=[
            ManifestService(name=s.name, price=s.price, duration_minutes=s.duration, source=src)
            for s in org.services
        ],
        intake_fields=[
            ManifestIntakeField(
                key=f.key, label=f.label, required=f.required, kind=f.kind, source=src
            )
            for f in org.intake_fields
        ],
        policies=[
            ManifestPolicyFact(id=p.id, text=p.text, critical=p.critical, source=src)
            for p in org.policies
        ],
        hours=[
            ManifestHours(days=h.days, opens=h.opens, closes=h.closes, source=src)
            for h in org.hours
        ],
        contacts=[
            ManifestContact(kind="phone", value=org.contact.phone, source=src),
            ManifestContact(kind="email", value=org.contact.email, source=src),
            ManifestContact(kind="website", value=org.contact.website, source=src),
        ],
        disallowed_claims=[
            DisallowedClaim(
                id="no-discounts",
                kind="invented_discount",
                text="Any discount, voucher or percentage off a treatment",
                source="generator",
            ),
            DisallowedClaim(
                id="no-guarantees",
                kind="guarantee",
                text="Guaranteed results of any treatment",
                source="generator",
            ),
            DisallowedClaim(
                id="no-orthodontics",
                kind="unoffered_service",
                text="Claims the practice offers orthodontic braces or Invisalign aligners",
                source="generator",
            ),
        ],
        instructions=[
            ManifestInstruction(name=s.name, text=s.instructions, source=src) for s in org.skills
        ],
    )


def make_fixture(text: str = NOISY_KB, *, key: str = "fx-1") -> Fixture:
    return Fixture(
        key=key,
        noise_level="messy",
        documents=[FixtureDocument(id="prices", title="Prices and hours", text=text)],
    )


def make_blueprint(
    *, facts: dict[str, str] | None = None, expected_status: str = "COMPLETE"
) -> Blueprint:
    return Blueprint(
        key="bp-1",
        scenario_type="booking",
        title="Book a hygiene clean",
        goal="Book a hygiene clean",
        fixture_key="fx-1",
        persona=Persona(
            name="Mary", locale="en_IE", style="casual", facts=dict(facts or DEFAULT_FACTS)
        ),
        planned_messages=["Hi, I'd like a cleaning"],
        expected_status=expected_status,
        max_turns=5,
    )


def make_case(
    turns: list[tuple[str, str] | tuple[str, str, dict[str, str]]],
    *,
    facts: dict[str, str] | None = None,
    expected_status: str = "COMPLETE",
    actual_status: str | None = "COMPLETE",
    fixture_text: str = NOISY_KB,
    case_key: str = "case-1",
) -> CaseTranscript:
    """A transcript from (customer, reply[, extracted]) tuples."""
    return CaseTranscript(
        case_key=case_key,
        blueprint=make_blueprint(facts=facts, expected_status=expected_status),
        fixture=make_fixture(fixture_text),
        turns=[
            Turn(index=i, customer=t[0], reply=t[1], extracted=t[2] if len(t) > 2 else {})
            for i, t in enumerate(turns)
        ],
        actual_status=actual_status,
    )


def make_config(**overrides: object) -> JudgeConfig:
    values: dict[str, object] = {"strictness": 0.5, "min_score_to_pass": 0.6}
    values.update(overrides)
    return JudgeConfig(**values)


def quote_is_in_source(case: CaseTranscript, evidence: Evidence) -> bool:
    """The acceptance rule: every evidence quote is a literal substring of what it cites."""
    turns = {t.index: t for t in case.turns}
    if evidence.source == "reply":
        return evidence.quote in turns[evidence.turn].reply
    if evidence.source == "customer":
        return evidence.quote in turns[evidence.turn].customer
    if evidence.source == "extracted":
        return any(evidence.quote in v for v in turns[evidence.turn].extracted.values())
    if evidence.source == "persona":
        return any(evidence.quote in v for v in case.blueprint.persona.facts.values())
    return False
