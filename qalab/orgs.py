"""Services and selectors of the org context: import a validated folder, read it back."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from qalab.domain import OrgContext
from qalab.models import IntakeField, KbDocument, Organization, Policy, Service, Skill
from qalab.redact import redact


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def kb_redacted(context: OrgContext) -> tuple[OrgContext, list[str]]:
    """The context with credential-shaped values and the lab's own secrets removed from its KB
    documents (a pasted API key would otherwise reach fixtures, findings and reports), and the
    slugs of the documents that had one."""
    docs, touched = [], []
    for doc in context.kb:
        clean = redact(doc.text)
        if clean != doc.text:
            touched.append(doc.slug)
            doc = doc.model_copy(update={"text": clean})
        docs.append(doc)
    return (context.model_copy(update={"kb": docs}) if touched else context), touched


@transaction.atomic
def organization_import(*, context: OrgContext) -> tuple[Organization, bool]:
    """Create or replace the organization `context.slug` in one transaction.

    Idempotent: importing the same folder twice leaves the same rows. Members are kept. KB
    documents are stored redacted (`kb_redacted`). Returns (organization, created).
    """
    context, _ = kb_redacted(context)
    org, created = Organization.objects.select_for_update().get_or_create(
        slug=context.slug,
        defaults={"name": context.name, "offering": context.offering},
    )
    org.name = context.name
    org.locale = context.locale
    org.currency = context.currency
    org.offering = context.offering
    org.hours = [h.model_dump() for h in context.hours]
    org.contact = context.contact.model_dump()
    org.responder = context.responder or ""
    org.responder_http = (
        context.responder_http.model_dump(mode="json") if context.responder_http else {}
    )
    org.save()

    for model in (Service, IntakeField, Policy, Skill, KbDocument):
        model.objects.filter(organization=org).delete()
    Service.objects.bulk_create(
        Service(organization=org, position=i, **s.model_dump())
        for i, s in enumerate(context.services)
    )
    IntakeField.objects.bulk_create(
        IntakeField(organization=org, position=i, **f.model_dump())
        for i, f in enumerate(context.intake_fields)
    )
    Policy.objects.bulk_create(
        Policy(organization=org, position=i, key=p.id, text=p.text, critical=p.critical)
        for i, p in enumerate(context.policies)
    )
    Skill.objects.bulk_create(
        Skill(organization=org, position=i, **s.model_dump()) for i, s in enumerate(context.skills)
    )
    KbDocument.objects.bulk_create(
        KbDocument(
            organization=org, slug=d.slug, title=d.title, text=d.text, sha256=sha256_text(d.text)
        )
        for d in context.kb
    )
    return org, created


def organization_get_context(*, organization: Organization) -> OrgContext:
    """The org context as the generator takes it, read from the database."""
    return OrgContext.model_validate(
        {
            "slug": organization.slug,
            "name": organization.name,
            "locale": organization.locale,
            "currency": organization.currency,
            "offering": organization.offering,
            "hours": organization.hours,
            "contact": organization.contact,
            "responder": organization.responder or None,
            "responder_http": organization.responder_http or None,
            "services": [
                {
                    "name": s.name,
                    "price": s.price,
                    "price_kind": s.price_kind,
                    "price_max": s.price_max,
                    "price_text": s.price_text,
                    "duration": s.duration,
                    "duration_max": s.duration_max,
                    "duration_text": s.duration_text,
                    "description": s.description,
                }
                for s in organization.services.all()
            ],
            "intake_fields": [
                {
                    "key": f.key,
                    "label": f.label,
                    "required": f.required,
                    "kind": f.kind,
                    "choices": f.choices,
                    "examples": f.examples,
                }
                for f in organization.intake_fields.all()
            ],
            "policies": [
                {"id": p.key, "text": p.text, "critical": p.critical}
                for p in organization.policies.all()
            ],
            "skills": [
                {"name": s.name, "instructions": s.instructions} for s in organization.skills.all()
            ],
            "kb": [
                {"slug": d.slug, "title": d.title, "text": d.text}
                for d in organization.kb_documents.all()
            ],
        }
    )


_LATER_SERVICE_FIELDS = {
    "price_kind": "exact",
    "price_max": None,
    "price_text": "",
    "duration_max": None,
    "duration_text": "",
}


def org_context_hash(context: OrgContext) -> str:
    """sha256 of the canonical JSON of the org context (the snapshot's org-context hash).

    Not the responder mapping: how to talk to the bot is no part of what it is tested on; a
    run holds the mapping in its config (`responder_http`), where the delta names it."""
    data = context.model_dump(mode="json", exclude={"responder_http"})
    for service in data["services"]:
        # Fields a service gained later count only when set, so an unchanged org keeps its hash.
        for key, default in _LATER_SERVICE_FIELDS.items():
            if service.get(key) == default:
                service.pop(key)
    for field in data["intake_fields"]:
        if not field["examples"]:  # likewise, a field's example values
            field.pop("examples")
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return sha256_text(canonical)


def organizations_for(user: Any) -> QuerySet[Organization]:
    """The organizations `user` may see and act for: all for a superuser, else their own."""
    qs = Organization.objects.all()
    return qs if user.is_superuser else qs.filter(members=user)
