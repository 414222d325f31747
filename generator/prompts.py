"""Prompt messages of the generator's engine calls: compact org summaries plus the instruction."""

from __future__ import annotations

import re
from pathlib import Path

from generator.facts import FREE_RE, money_mentions, money_text
from qalab.domain import OrgContext, PolicySpec, ServiceSpec
from qalab.llm import Message
from qalab.llm.prompts import PromptFile, load_prompt

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


def prompt(name: str) -> PromptFile:
    """The current version of generator prompt `name` (generator/prompts/<name>.v<N>.md)."""
    return load_prompt(PROMPTS_DIR, name)


_WHOLE_DASH = re.compile(r"(?<=\d)[.,][-\u2013\u2014]{1,2}(?!\d)")


def price(org: OrgContext, service: ServiceSpec) -> str:
    """The written price of a service: the org's own words ('from €80', '£52', 'free'), with
    the currency code added when they name none ('from 80' -> 'from 80 EUR'), so every reader
    finds the amount as money; '80 EUR' for a price given as a number."""
    text = service.price_text
    if not text:
        return f"{money_text(service.price)} {org.currency}"
    if money_mentions(text) or FREE_RE.search(text):
        return text
    return f"{_WHOLE_DASH.sub('', text)} {org.currency}"


def duration(service: ServiceSpec, unit: str = "min") -> str:
    """How long a service takes as written: the org's own words ('1h 30', '2 visits'), else
    the minutes ('45 min')."""
    return service.duration_text or f"{service.duration} {unit}"


def service_line(org: OrgContext, service: ServiceSpec, *, description: bool) -> str:
    line = f"- {service.name} | {price(org, service)} | {duration(service)}"
    return f"{line} | {service.description}" if description and service.description else line


def policy_line(policy: PolicySpec) -> str:
    return f"- {policy.id}{' (critical)' if policy.critical else ''}: {policy.text}"


def org_header(org: OrgContext) -> str:
    return f"Organization: {org.name} (slug {org.slug}, locale {org.locale}, {org.currency})"


def org_brief(org: OrgContext, *, descriptions: bool = False, policies: bool = True) -> str:
    """A compact, complete summary of the structured org context."""
    lines = [org_header(org), f"Offering: {' '.join(org.offering.split())}", "Services:"]
    lines += [service_line(org, s, description=descriptions) for s in org.services]
    lines.append("Intake fields:")
    for f in org.intake_fields:
        line = f"- {f.key} ({f.kind}, {'required' if f.required else 'optional'}): {f.label}"
        # The org's own example values show what such a field holds (never its label).
        lines.append(line + (f" (e.g. {'; '.join(f.examples[:3])})" if f.examples else ""))
    if policies and org.policies:
        lines.append("Policies:")
        lines += [policy_line(p) for p in org.policies]
    if org.hours:
        lines.append("Hours: " + "; ".join(f"{h.days} {h.opens}-{h.closes}" for h in org.hours))
    contact = org.contact
    pairs = [("phone", contact.phone), ("email", contact.email), ("address", contact.address)]
    pairs.append(("website", contact.website))
    present = [f"{k} {v}" for k, v in pairs if v]
    if present:
        lines.append("Contact: " + "; ".join(present))
    if org.kb:
        lines.append("KB documents: " + ", ".join(f"kb/{d.slug}.md" for d in org.kb))
    return "\n".join(lines)


def messages(user: str) -> list[Message]:
    """The system instruction plus one user message."""
    return [
        {"role": "system", "content": prompt("system").render()},
        {"role": "user", "content": user},
    ]
