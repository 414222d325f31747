"""The database the management commands need: present and migrated, or a clear error."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.utils import DatabaseError


def require_migrated(alias: str = DEFAULT_DB_ALIAS) -> None:
    """Raise a CommandError naming the fix when the database cannot be reached or has
    migrations not applied yet (a fresh checkout, a new DATABASE_URL), instead of a traceback
    from the first query."""
    connection = connections[alias]
    where = connection.settings_dict.get("NAME") or alias
    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        raise CommandError(f"cannot use the database {where}: {exc}", returncode=2) from None
    if pending:
        # With an owner role configured, the schema is built as that role (docs/operations.md,
        # "Database roles").
        command = "migrate --database owner" if "owner" in connections.settings else "migrate"
        raise CommandError(
            f"the database {where} has {len(pending)} migration(s) not applied yet: run "
            f"`python manage.py {command}` first (`make demo` does it for the embedded defaults)",
            returncode=2,
        )
