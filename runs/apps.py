"""App config of the run orchestrator."""

from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "AI QA Lab"
