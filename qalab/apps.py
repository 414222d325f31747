"""App config of the shared core (org context)."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_migrate

from qalab import db_roles


class QalabConfig(AppConfig):
    name = "qalab"
    verbose_name = "Organizations"

    def ready(self) -> None:
        # Every Django process (web, manage.py, tests) hands tasks to the project's Celery app:
        # load it here, once, so `shared_task`s bind to it and not to Celery's default app.
        from qalab import celery  # noqa: F401

        # With an owner role configured, migrations run on it and then grant the app role its
        # row rights; a plain `migrate` as the app role is refused up front.
        pre_migrate.connect(
            db_roles.refuse_migrate_as_app_role, sender=self, dispatch_uid="qalab-db-roles-pre"
        )
        post_migrate.connect(db_roles.grant_app_role, sender=self, dispatch_uid="qalab-db-roles")
