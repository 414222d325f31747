"""App config of the shared core (org context)."""

from __future__ import annotations

from django.apps import AppConfig


class QalabConfig(AppConfig):
    name = "qalab"
    verbose_name = "Organizations"

    def ready(self) -> None:
        # Every Django process (web, manage.py, tests) hands tasks to the project's Celery app:
        # load it here, once, so `shared_task`s bind to it and not to Celery's default app.
        from qalab import celery  # noqa: F401
