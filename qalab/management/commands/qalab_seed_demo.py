"""`manage.py qalab_seed_demo`: import the demo organization shipped in qalab/demo_org."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from qalab.org_folder import DEMO_ORG_DIR


class Command(BaseCommand):
    help = "Import (or refresh) the demo organization, slug 'demo'."

    def handle(self, *args: Any, **options: Any) -> None:
        call_command(
            "qalab_import_org",
            str(DEMO_ORG_DIR),
            "--replace",  # refreshing the shipped demo org is what this command is for
            stdout=self.stdout,
            stderr=self.stderr,
        )
