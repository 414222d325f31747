"""Admin for the org context."""

from __future__ import annotations

from django.contrib import admin

from qalab.models import IntakeField, KbDocument, Organization, Policy, Service, Skill


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
    list_display = ["name", "slug", "locale", "responder", "updated_at"]
    search_fields = ["name", "slug"]
    filter_horizontal = ["members"]
    inlines = [ServiceInline, IntakeFieldInline, PolicyInline, SkillInline, KbDocumentInline]
