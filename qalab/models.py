"""Org context: the tenant, its services, intake fields, policies, skills and KB documents."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from qalab.domain import (
    CURRENCY_MAX,
    KB_SLUG_MAX,
    KB_TITLE_MAX,
    LOCALE_MAX,
    NAME_MAX,
    PRICE_DECIMALS,
    PRICE_MAX_DIGITS,
    RESPONDER_MAX,
    SLUG_MAX,
)
from qalab.values import PRICE_KINDS


class Organization(models.Model):
    slug = models.SlugField(unique=True, max_length=SLUG_MAX)
    name = models.CharField(max_length=NAME_MAX)
    locale = models.CharField(max_length=LOCALE_MAX, default="en_US")
    currency = models.CharField(max_length=CURRENCY_MAX, default="EUR")
    offering = models.TextField()
    hours = models.JSONField(default=list, blank=True, help_text="[{days, opens, closes}]")
    contact = models.JSONField(
        default=dict, blank=True, help_text="{phone, email, address, website}"
    )
    responder = models.CharField(
        max_length=RESPONDER_MAX, blank=True, help_text="Default responder spec, e.g. reference"
    )
    responder_http = models.JSONField(
        default=dict,
        blank=True,
        help_text="How to talk to an http(s) responder of its own JSON shape (request template, "
        "response paths); empty: it speaks the lab's contract",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="qalab_organizations"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "qa_organizations"
        ordering = ["name"]
        permissions = [
            ("start_run", "Can start a QA run"),
            ("triage_finding", "Can triage findings"),
            ("promote_fixture", "Can promote a fixture into docs/kb-fixtures"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"


class Service(models.Model):
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="services"
    )
    position = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=NAME_MAX)
    price = models.DecimalField(
        max_digits=PRICE_MAX_DIGITS,
        decimal_places=PRICE_DECIMALS,
        help_text="the price, or the lowest of a range or a 'from' price",
    )
    price_kind = models.CharField(
        max_length=10, choices=[(k, k) for k in PRICE_KINDS], default="exact"
    )
    price_max = models.DecimalField(
        max_digits=PRICE_MAX_DIGITS,
        decimal_places=PRICE_DECIMALS,
        null=True,
        blank=True,
        help_text="the top of a price range",
    )
    price_text = models.CharField(
        max_length=NAME_MAX, blank=True, help_text="the org's words for the price ('from €80')"
    )
    duration = models.PositiveIntegerField(
        null=True, blank=True, help_text="minutes; empty when the duration is descriptive text"
    )
    duration_max = models.PositiveIntegerField(
        null=True, blank=True, help_text="minutes: the longest of a range"
    )
    duration_text = models.CharField(
        max_length=NAME_MAX, blank=True, help_text="the org's words for the duration ('1h 30')"
    )
    description = models.TextField(blank=True)

    class Meta:
        db_table = "qa_org_services"
        ordering = ["position"]

    def __str__(self) -> str:
        return self.name


class IntakeField(models.Model):
    KINDS = [(k, k) for k in ("name", "phone", "email", "date", "time", "text", "choice")]

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="intake_fields"
    )
    position = models.PositiveIntegerField(default=0)
    key = models.SlugField(max_length=SLUG_MAX)
    label = models.CharField(max_length=NAME_MAX)
    required = models.BooleanField(default=True)
    kind = models.CharField(max_length=10, choices=KINDS, default="text")
    choices = models.JSONField(default=list, blank=True)
    examples = models.JSONField(default=list, blank=True, help_text="values a customer may give")

    class Meta:
        db_table = "qa_org_intake_fields"
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="uniq_intake_field_key")
        ]

    def __str__(self) -> str:
        return self.key


class Policy(models.Model):
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="policies"
    )
    position = models.PositiveIntegerField(default=0)
    key = models.SlugField(max_length=SLUG_MAX)
    text = models.TextField()
    critical = models.BooleanField(default=False)

    class Meta:
        db_table = "qa_org_policies"
        ordering = ["position"]
        verbose_name_plural = "policies"
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="uniq_policy_key")
        ]

    def __str__(self) -> str:
        return self.key


class Skill(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="skills")
    position = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=NAME_MAX)
    instructions = models.TextField()

    class Meta:
        db_table = "qa_org_skills"
        ordering = ["position"]

    def __str__(self) -> str:
        return self.name


class KbDocument(models.Model):
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="kb_documents"
    )
    slug = models.SlugField(max_length=KB_SLUG_MAX)
    title = models.CharField(max_length=KB_TITLE_MAX)
    text = models.TextField()
    sha256 = models.CharField(max_length=64)

    class Meta:
        db_table = "qa_org_kb_documents"
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "slug"], name="uniq_kb_slug")
        ]

    def __str__(self) -> str:
        return self.title
