"""`manage.py qalab_import_org DIR`: validate an org folder and import it (all or nothing)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from qalab.database import require_migrated
from qalab.models import Organization
from qalab.org_folder import OrgFolderError, load_org_folder
from qalab.orgs import kb_redacted, organization_import


class Command(BaseCommand):
    help = "Import an organization from a folder (org.yaml + kb/*.md). Nothing is written on error."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", help="org folder: org.yaml plus kb/*.md")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="update the organization if its slug exists (default: refuse, nothing changed)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            context = load_org_folder(options["dir"])
        except OrgFolderError as exc:
            raise CommandError(f"invalid org folder, nothing imported:\n{exc}") from exc
        require_migrated()  # the folder is checked first: that needs no database
        existing = Organization.objects.filter(slug=context.slug).first()
        if existing is not None and not options["replace"]:
            raise CommandError(
                f"organization '{context.slug}' exists already ({existing.name}); nothing "
                "imported. Pass --replace to update it from this folder."
            )
        _, redacted = kb_redacted(context)
        for slug in redacted:
            self.stderr.write(
                f"kb/{slug}.md: a credential-shaped value (API key, token, password) was "
                "replaced by [REDACTED]; the lab never stores secrets"
            )
        org, created = organization_import(context=context)
        verb = "Imported" if created else "Updated"
        self.stdout.write(
            self.style.SUCCESS(
                f"{verb} organization '{org.slug}' ({org.name}): {len(context.services)} services, "
                f"{len(context.intake_fields)} intake fields, {len(context.policies)} policies, "
                f"{len(context.kb)} KB documents"
            )
        )
