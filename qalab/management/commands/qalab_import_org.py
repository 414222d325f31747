"""`manage.py qalab_import_org DIR`: validate an org folder and import it (all or nothing)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError

from qalab.database import require_migrated
from qalab.models import Organization
from qalab.org_folder import OrgFolderError, OrgFolderLimits, load_org_folder
from qalab.orgs import kb_redacted, organization_import


def _refusal(error: OrgFolderError) -> str:
    """Every problem of the folder: on the first line when there is one, else one per line."""
    if len(error.problems) == 1:
        return f"invalid org folder, nothing imported: {error}"
    lines = "\n".join(f"  {line}" for line in str(error).splitlines())
    return f"invalid org folder, nothing imported: {len(error.problems)} problems\n{lines}"


class Command(BaseCommand):
    help = (
        "Import an organization from a folder (org.yaml + kb/*.md). Nothing is written on error; "
        "exit 2 on an invalid folder, with every problem found (one line each, naming the file, "
        "the field and the value, with an example)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", help="org folder: org.yaml plus kb/*.md")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="update the organization if its slug exists (default: refuse, nothing changed)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        limits = OrgFolderLimits(
            max_file_bytes=settings.QALAB_ORG_MAX_FILE_BYTES,
            max_kb_bytes=settings.QALAB_ORG_MAX_KB_BYTES,
        )
        try:
            context = load_org_folder(options["dir"], limits=limits)
        except OrgFolderError as exc:
            raise CommandError(_refusal(exc), returncode=2) from None
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
        try:
            org, created = organization_import(context=context)
        except IntegrityError as exc:  # the checks above should leave nothing for the tables
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CommandError(
                f"invalid org folder, nothing imported: {options['dir']}: {first}", returncode=2
            ) from None
        verb = "Imported" if created else "Updated"
        self.stdout.write(
            self.style.SUCCESS(
                f"{verb} organization '{org.slug}' ({org.name}): {len(context.services)} services, "
                f"{len(context.intake_fields)} intake fields, {len(context.policies)} policies, "
                f"{len(context.kb)} KB documents"
            )
        )
