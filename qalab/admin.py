"""Admin for the org context."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.forms import Textarea
from django.http import HttpRequest

from qalab.models import IntakeField, KbDocument, Organization, Policy, Service, Skill
from qalab.orgs import organizations_for

# Short text boxes in the inlines: the admin's 48em text areas made the organization's page
# wider than a laptop screen (issue 35); a box still grows with its handle.
COMPACT_TEXT: dict[type[models.Field[Any, Any]], dict[str, Any]] = {
    models.TextField: {"widget": Textarea(attrs={"rows": 2, "cols": 40})},
    models.JSONField: {"widget": Textarea(attrs={"rows": 1, "cols": 24})},
}


class ServiceInline(admin.StackedInline):
    """Stacked, a few short fields a line: as a table its ten columns were 2,700 px wide."""

    model = Service
    extra = 0
    formfield_overrides = COMPACT_TEXT
    ROWS = (
        ("position", "name"),
        ("price_kind", "price", "price_max", "price_text"),
        ("duration", "duration_max", "duration_text"),
    )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        """The rows above, then every other field of a service, one a line (a field added to
        the model later shows without a change here)."""
        grouped = {name for row in self.ROWS for name in row}
        rest = [f for f in super().get_fields(request, obj) if f not in grouped]
        return [*self.ROWS, *rest]


class IntakeFieldInline(admin.TabularInline):
    model = IntakeField
    extra = 0
    formfield_overrides = COMPACT_TEXT


class PolicyInline(admin.TabularInline):
    model = Policy
    extra = 0
    formfield_overrides = COMPACT_TEXT


class SkillInline(admin.StackedInline):
    model = Skill
    extra = 0


class KbDocumentInline(admin.StackedInline):
    model = KbDocument
    extra = 0
    readonly_fields = ["sha256"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    """Staff see and edit only their own organizations, and cannot change who is a member
    (else they could add themselves to another org and see its runs); superusers see all."""

    list_display = ["name", "slug", "locale", "responder", "updated_at"]
    search_fields = ["name", "slug"]
    filter_horizontal = ["members"]
    # Validated at import only (qalab_import_org): an edit here would skip the secret checks.
    readonly_fields = ["responder_http"]
    inlines = [ServiceInline, IntakeFieldInline, PolicyInline, SkillInline, KbDocumentInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Organization]:
        return organizations_for(request.user)

    def get_readonly_fields(
        self, request: HttpRequest, obj: Organization | None = None
    ) -> list[str] | tuple[str, ...]:
        fields = list(super().get_readonly_fields(request, obj))
        return fields if request.user.is_superuser else [*fields, "members"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A new organization would have no member: only a superuser can give it one.
        return request.user.is_superuser
