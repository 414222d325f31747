"""Fixture documents rendered by code from the structured org context, in varied shapes.

These restate structured data (price list, hours, contacts, policies, intake checklist), so they
are rendered by code like the noise: no tokens are spent on retyping a table.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from generator.domain import WEEKDAYS, hours_by_weekday
from generator.prompts import duration, price
from generator.schemas import FixtureDocument
from qalab.domain import OrgContext

Sheet = Callable[[OrgContext, str], FixtureDocument]


def _doc(doc_id: str, title: str, lines: list[str]) -> FixtureDocument:
    return FixtureDocument(id=doc_id, title=title, text="\n".join(lines).strip("\n") + "\n")


def price_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """The price list as a table, a bullet list or prose."""
    lines = [f"All prices in {org.currency}.", ""]
    if shape == "table":
        lines += ["| Service | Price | Duration |", "|---|---|---|"]
        lines += [f"| {s.name} | {price(org, s)} | {duration(s)} |" for s in org.services]
    elif shape == "bullets":
        lines += [f"- {s.name}: {price(org, s)} ({duration(s)})" for s in org.services]
    else:
        for n, s in enumerate(org.services):
            takes = (
                f"(time needed: {s.duration_text})"
                if s.duration_text
                else f"and takes about {s.duration} minutes"
            )
            lines.append(f"{s.name} costs {price(org, s)} {takes}.")
            if n % 3 == 2:
                lines.append("")
    return _doc(f"sheet-prices-{shape}", "Price list", lines)


def closed_days(org: OrgContext) -> list[str]:
    """Weekday names not covered by any hours line."""
    by_day = hours_by_weekday(org.hours)
    return [WEEKDAYS[d] for d in range(7) if d not in by_day]


def hours_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """Opening hours as a list, a table or prose."""
    closed = closed_days(org)
    if shape == "table":
        lines = ["| Days | Opens | Closes |", "|---|---|---|"]
        lines += [f"| {h.days} | {h.opens} | {h.closes} |" for h in org.hours]
    elif shape == "list":
        lines = [f"- {h.days}: {h.opens} to {h.closes}" for h in org.hours]
    else:
        lines = [f"On {h.days} we are open from {h.opens} until {h.closes}." for h in org.hours]
    if closed:
        lines += ["", f"Closed on {', '.join(closed)}."]
    return _doc(f"sheet-hours-{shape}", "Opening hours", lines)


def contact_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """Contact details as a block or as an email-style signature."""
    c = org.contact
    if shape == "signature":
        lines = ["Kind regards,", "", "--", org.name]
        lines += [v for v in (c.address,) if v]
        tel = " | ".join(v for v in (f"T {c.phone}" if c.phone else "", c.email) if v)
        lines += [tel] if tel else []
        lines += [c.website] if c.website else []
    else:
        pairs = [("Phone", c.phone), ("Email", c.email), ("Address", c.address)]
        pairs.append(("Website", c.website))
        lines = [f"{k}: {v}" for k, v in pairs if v]
    return _doc(f"sheet-contact-{shape}", f"Contact {org.name}", lines)


def policy_question(policy_id: str) -> str:
    """A customer's question about a policy, phrased from its id."""
    topic = policy_id.replace("-", " ").replace("_", " ")
    return f"What is your policy on {topic}?"


def policy_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """Policies as a numbered list or as an FAQ."""
    lines: list[str] = []
    if shape == "faq":
        for p in org.policies:
            lines += [f"Q: {policy_question(p.id)}", f"A: {p.text}", ""]
        return _doc("sheet-policies-faq", "Frequently asked questions", lines)
    lines = [f"{n}. {p.text}" for n, p in enumerate(org.policies, start=1)]
    return _doc("sheet-policies-list", "Practice policies", lines)


def intake_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """The booking checklist: which details are needed."""
    required = [f.label for f in org.intake_fields if f.required]
    optional = [f.label for f in org.intake_fields if not f.required]
    if shape == "prose":
        lines = [f"To book we need: {', '.join(required)}."]
        lines += [f"Helpful but optional: {', '.join(optional)}."] if optional else []
    else:
        lines = ["Before confirming a booking, collect:", ""]
        lines += [f"- {f.label}{'' if f.required else ' (optional)'}" for f in org.intake_fields]
    return _doc(f"sheet-intake-{shape}", "Booking checklist", lines)


def catalogue_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """Every service with its description, duration and price."""
    lines = [" ".join(org.offering.split()), ""]
    for s in org.services:
        lines += [f"## {s.name}", ""]
        if s.description:
            lines.append(s.description)
        lines += [f"Duration: {duration(s)}. Price: {price(org, s)}.", ""]
    return _doc("sheet-catalogue", f"Services at {org.name}", lines)


def guidelines_sheet(org: OrgContext, shape: str) -> FixtureDocument:
    """The team's working instructions (the org's skills)."""
    lines = []
    for skill in org.skills:
        lines += [f"## {skill.name.replace('_', ' ').capitalize()}", "", skill.instructions, ""]
    return _doc("sheet-guidelines", "Team guidelines", lines or ["Follow the price list."])


BASE_SHEETS: tuple[tuple[Sheet, tuple[str, ...]], ...] = (
    (price_sheet, ("table", "bullets", "prose")),
    (hours_sheet, ("list", "table", "prose")),
    (contact_sheet, ("block", "signature")),
    (policy_sheet, ("list", "faq")),
    (intake_sheet, ("list", "prose")),
    (catalogue_sheet, ("full",)),
    (guidelines_sheet, ("full",)),
)


def _has_data(org: OrgContext, sheet: Sheet) -> bool:
    """False for a sheet the org has nothing to put in: hours, contact or policies left out of
    org.yaml (such a sheet would be a bare heading)."""
    c = org.contact
    if sheet is hours_sheet:
        return bool(org.hours)
    if sheet is contact_sheet:
        return any((c.phone, c.email, c.address, c.website))
    if sheet is policy_sheet:
        return bool(org.policies)
    return True


def base_sheets(org: OrgContext, rng: random.Random) -> list[FixtureDocument]:
    """One sheet of each kind, in a seeded shape (hours, contact and policies only when the org
    has them)."""
    docs = []
    for sheet, shapes in BASE_SHEETS:
        if not _has_data(org, sheet):
            continue
        docs.append(sheet(org, rng.choice(shapes)))
    return docs


def extra_sheets(org: OrgContext, used: set[str]) -> list[FixtureDocument]:
    """The shapes not used yet, as the copies real KBs accumulate ("old price list", ...)."""
    out = []
    for sheet, shapes in BASE_SHEETS[:4]:
        for shape in shapes:
            doc = sheet(org, shape)
            if doc.id not in used and _has_data(org, sheet):
                out.append(doc.model_copy(update={"title": f"{doc.title} (older copy)"}))
    return out
