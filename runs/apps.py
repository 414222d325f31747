"""App config of the run orchestrator."""

from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "AI QA Lab"

    def ready(self) -> None:
        from judge.semantic.thresholds import SEMANTIC_RULES

        unknown = sorted(set(settings.QALAB_SEMANTIC_THRESHOLDS) - set(SEMANTIC_RULES))
        if unknown:
            raise ImproperlyConfigured(
                f"QALAB_SEMANTIC_THRESHOLDS names {', '.join(unknown)}: not a semantic rule "
                f"(one of {', '.join(SEMANTIC_RULES)})"
            )
