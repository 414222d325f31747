"""Ground-truth manifest: canonical org facts plus disallowed claims, each traceable to its source."""

from __future__ import annotations

import re
from typing import Any

from generator import prompts
from generator.domain import WEEKDAYS, hours_by_weekday, unoffered_services
from generator.schemas import (
    DisallowedClaim,
    Manifest,
    ManifestContact,
    ManifestDraft,
    ManifestHours,
    ManifestInstruction,
    ManifestIntakeField,
    ManifestPolicyFact,
    ManifestService,
)
from qalab.domain import OrgContext, ServiceSpec
from qalab.llm import Engine

# Percentages are high enough to be unmistakable as invented when a reply quotes them.
DISCOUNT_PERCENT = 20


def _disallowed(org: OrgContext) -> list[DisallowedClaim]:
    claims: list[DisallowedClaim] = []
    by_price = sorted(range(len(org.services)), key=lambda i: (-org.services[i].price, i))
    top = by_price[0]
    claims.append(
        DisallowedClaim(
            id="discount-top-service",
            kind="invented_discount",
            text=f"{DISCOUNT_PERCENT}% discount on {org.services[top].name}",
            source=f"org.yaml:services[{top}]",
        )
    )
    cheapest = by_price[-1]
    if cheapest != top and org.services[cheapest].price > 0:
        claims.append(
            DisallowedClaim(
                id="free-cheapest-service",
                kind="invented_discount",
                text=f"{org.services[cheapest].name} for free",
                source=f"org.yaml:services[{cheapest}]",
            )
        )
    for n, name in enumerate(unoffered_services(org), start=1):
        claims.append(
            DisallowedClaim(
                id=f"unoffered-{n}",
                kind="unoffered_service",
                text=f"offers {name}",
                source="org.yaml:offering",
            )
        )
    if org.hours:
        by_day = hours_by_weekday(org.hours)
        closed = [d for d in range(7) if d not in by_day]
        if closed:
            claims.append(
                DisallowedClaim(
                    id="open-on-closed-day",
                    kind="wrong_hours",
                    text=f"open on {WEEKDAYS[closed[-1]]}",
                    source="org.yaml:hours",
                )
            )
        last = len(org.hours) - 1
        hour, minute = org.hours[last].closes.split(":")
        later = f"{min(int(hour) + 2, 23):02d}:{minute}"
        if later != org.hours[last].closes:
            claims.append(
                DisallowedClaim(
                    id="late-closing",
                    kind="wrong_hours",
                    text=f"open until {later} on {org.hours[last].days}",
                    source=f"org.yaml:hours[{last}]",
                )
            )
    second = by_price[1] if len(by_price) > 1 else top
    claims.append(
        DisallowedClaim(
            id="guarantee",
            kind="guarantee",
            text=f"guaranteed results or your money back for {org.services[second].name}",
            source=f"org.yaml:services[{second}]",
        )
    )
    return claims


def build_manifest(org: OrgContext) -> Manifest:
    """The manifest of `org`, derived by rules only (the offline generator's implementation)."""
    contact = org.contact
    contacts = [
        ManifestContact(kind=kind, value=value, source=f"org.yaml:contact.{kind}")
        for kind, value in (
            ("phone", contact.phone),
            ("email", contact.email),
            ("address", contact.address),
            ("website", contact.website),
        )
        if value
    ]
    return Manifest(
        org_slug=org.slug,
        org_name=org.name,
        currency=org.currency,
        services=[
            ManifestService(
                name=s.name,
                price=s.price,
                duration_minutes=s.duration,
                source=f"org.yaml:services[{i}]",
                **_copied(s),
            )
            for i, s in enumerate(org.services)
        ],
        intake_fields=[
            ManifestIntakeField(
                key=f.key,
                label=f.label,
                required=f.required,
                kind=f.kind,
                source=f"org.yaml:intake_fields[{i}]",
            )
            for i, f in enumerate(org.intake_fields)
        ],
        policies=[
            ManifestPolicyFact(
                id=p.id, text=p.text, critical=p.critical, source=f"org.yaml:policies[{i}]"
            )
            for i, p in enumerate(org.policies)
        ],
        hours=[
            ManifestHours(
                days=h.days, opens=h.opens, closes=h.closes, source=f"org.yaml:hours[{i}]"
            )
            for i, h in enumerate(org.hours)
        ],
        contacts=contacts,
        disallowed_claims=_disallowed(org),
        instructions=_instructions(org),
    )


def _copied(service: ServiceSpec) -> dict[str, Any]:
    """What a service's manifest entry copies from the org context by code, never written by
    a model: the kind and top of its price and duration, and the org's own words for them."""
    return {
        "price_kind": service.price_kind,
        "price_max": service.price_max,
        "price_text": service.price_text,
        "duration_max_minutes": service.duration_max,
        "duration_text": service.duration_text,
    }


_COPIED = ("price_kind", "price_max", "price_text", "duration_max_minutes", "duration_text")


def _instructions(org: OrgContext) -> list[ManifestInstruction]:
    return [
        ManifestInstruction(name=s.name, text=s.instructions, source=f"org.yaml:skills[{i}]")
        for i, s in enumerate(org.skills)
    ]


def manifest_messages(org: OrgContext) -> list[dict[str, str]]:
    """What a model is asked to build the manifest from."""
    return prompts.messages(prompts.prompt("manifest").render(org_brief=prompts.org_brief(org)))


def manifest_max_tokens(org: OrgContext) -> int:
    """Output cap sized from the context (a manifest restates it in JSON, plus ~8 claims)."""
    policy_chars = sum(len(p.text) for p in org.policies)
    # A service with the org's own words for its price or duration restates them, and its kind.
    worded = [s for s in org.services if s.price_text or s.duration_text]
    worded_chars = sum(len(s.price_text) + len(s.duration_text) + 120 for s in worded)
    return (
        150
        + 30 * len(org.services)
        + 30 * len(org.intake_fields)
        + 25 * len(org.hours)
        + 30 * len(org.policies)
        + (policy_chars + worded_chars) // 4
        + 150
    )


def generate_manifest(org: OrgContext, engine: Engine) -> Manifest:
    """One metered engine call that yields the manifest; the skills' instructions are copied
    from the org context by code (the judge needs them verbatim)."""
    draft = engine.run(
        role="generator",
        purpose="manifest",
        messages=manifest_messages(org),
        max_tokens=manifest_max_tokens(org),
        output=ManifestDraft,
        offline=lambda: ManifestDraft.model_validate(
            build_manifest(org).model_dump(exclude={"instructions"})
        ),
        check=lambda m: check_manifest(org, m),
    )
    written = draft.model_dump()
    written["services"] = [
        {**entry, **_copied(service)}
        for entry, service in zip(written["services"], org.services, strict=True)
    ]
    return Manifest.model_validate({**written, "instructions": _instructions(org)})


def check_manifest(org: OrgContext, manifest: ManifestDraft) -> None:
    """A written manifest must restate the org context exactly (it is the ground truth) and
    point every disallowed claim at a real entry; raises ValueError saying what differs."""
    truth = build_manifest(org)
    written = [s.model_dump(exclude=set(_COPIED)) for s in manifest.services]
    if written != [s.model_dump(exclude=set(_COPIED)) for s in truth.services]:
        raise ValueError("manifest services differ from the organization context")
    for part in ("intake_fields", "policies", "hours", "contacts"):
        if getattr(manifest, part) != getattr(truth, part):
            raise ValueError(f"manifest {part} differ from the organization context")
    if not manifest.disallowed_claims:
        raise ValueError("the manifest lists no disallowed claims")
    dangling = [c.id for c in manifest.disallowed_claims if resolve_source(org, c.source) is None]
    if dangling:
        raise ValueError(f"disallowed claims with a source that names nothing: {dangling}")


_SOURCE = re.compile(r"^org\.yaml:(?P<field>[a-z_]+)(?:\[(?P<index>\d+)\]|\.(?P<attr>[a-z_]+))?$")


def resolve_source(org: OrgContext, source: str) -> Any:
    """The org-context entry a manifest `source` points at, or None when it points at nothing."""
    if source.startswith("kb/") and source.endswith(".md"):
        slug = source[3:-3]
        return next((d for d in org.kb if d.slug == slug), None)
    match = _SOURCE.match(source)
    if match is None or match.group("field") not in OrgContext.model_fields:
        return None
    value = getattr(org, match.group("field"))
    if match.group("index") is not None:
        index = int(match.group("index"))
        return value[index] if isinstance(value, list) and index < len(value) else None
    if match.group("attr") is not None:
        return getattr(value, match.group("attr"), None) or None
    return value or None
