"""Admin for the org context."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from qalab.models import IntakeField, KbDocument, Organization, Policy, Service, Skill
from qalab.orgs import organizations_for


class ServiceInline(admin.TabularInline):
    model = Service
    extra = 0


class IntakeFieldInline(admin.TabularInline):
    model = IntakeField
    extra = 0


class PolicyInline(admin.TabularInline):
    model = Policy
    extra = 0


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
