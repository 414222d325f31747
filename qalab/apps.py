"""App config of the shared core (org context)."""

from __future__ import annotations

from django.apps import AppConfig


class QalabConfig(AppConfig):
    name = "qalab"
    verbose_name = "Organizations"
