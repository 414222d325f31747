"""Two Postgres roles: an owner that migrates, an app role that only reads and writes rows.

With `DATABASE_OWNER_URL` set, `manage.py migrate --database owner` builds the schema as the
owner, then `grant_app_role` gives the app role (`QALAB_DB_APP_ROLE`, default the user of
`DATABASE_URL`) exactly SELECT, INSERT, UPDATE, DELETE on the tables and USAGE, SELECT on the
sequences of the schema, now and for tables the owner makes later. The app role owns nothing and
holds no TRUNCATE, TRIGGER or REFERENCES: it can neither truncate, drop or disable the triggers
that lock a finished run nor replace their functions, and `session_replication_role` (which
turns triggers off) needs a superuser.

A no-op off Postgres, and when the migrating role is the app role itself (one role, as in the
SQLite demo and `make test`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

OWNER_ALIAS = "owner"


def quote_ident(name: str) -> str:
    """A Postgres identifier, quoted (role and schema names come from settings)."""
    return '"' + name.replace('"', '""') + '"'


def grant_statements(schema: str, role: str) -> list[str]:
    """Revoke whatever the app role held on the schema's tables and sequences, then grant the
    row rights only, for existing objects and (default privileges) for the owner's new ones."""
    s, r = quote_ident(schema), quote_ident(role)
    rows = "SELECT, INSERT, UPDATE, DELETE"
    return [
        f"GRANT USAGE ON SCHEMA {s} TO {r}",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM {r}",
        f"GRANT {rows} ON ALL TABLES IN SCHEMA {s} TO {r}",
        f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {s} FROM {r}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {r}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} REVOKE ALL ON TABLES FROM {r}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT {rows} ON TABLES TO {r}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} REVOKE ALL ON SEQUENCES FROM {r}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT USAGE, SELECT ON SEQUENCES TO {r}",
    ]


def migrate_refusal(using: str, databases: dict[str, dict[str, Any]]) -> str | None:
    """Why a migrate on `using` must not run, or None. With an owner configured, migrations run
    on it, and it must name the app's database; a plain `migrate` would run as the app role and
    fail midway on permissions, so it is refused up front."""
    owner = databases.get(OWNER_ALIAS)
    if owner is None:
        return None
    default = databases[DEFAULT_DB_ALIAS]
    if using == OWNER_ALIAS:
        for key in ("ENGINE", "NAME"):
            if owner.get(key) != default.get(key):
                return (
                    f"DATABASE_OWNER_URL must name the database of DATABASE_URL ({key} differs: "
                    f"{owner.get(key)!r} vs {default.get(key)!r})"
                )
        return None
    if using == DEFAULT_DB_ALIAS and owner.get("USER") != default.get("USER"):
        return (
            "DATABASE_OWNER_URL is set, so the schema belongs to the owner role: run "
            "`python manage.py migrate --database owner`. The app role of DATABASE_URL may "
            "read and write rows but not change tables."
        )
    return None


def refuse_migrate_as_app_role(*, using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """pre_migrate (before any schema change): stop a migrate `migrate_refusal` refuses."""
    reason = migrate_refusal(using, settings.DATABASES)
    if reason:
        raise CommandError(reason)


def grant_app_role(
    *, using: str = DEFAULT_DB_ALIAS, verbosity: int = 1, stdout: Any = None, **kwargs: Any
) -> None:
    """post_migrate: the migrating role grants the app role its row rights (see module doc)."""
    connection = connections[using]
    role = str(getattr(settings, "QALAB_DB_APP_ROLE", "") or "")
    if connection.vendor != "postgresql" or not role:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, current_schema()")
        current_user, schema = cursor.fetchone()
    if current_user == role or not schema:
        return
    try:
        with transaction.atomic(using=using), connection.cursor() as cursor:
            for statement in grant_statements(schema, role):
                cursor.execute(statement)
    except DatabaseError as exc:
        raise CommandError(
            f"migrated, but could not grant the app role {role!r} its rights on schema "
            f"{schema!r} as {current_user!r}: {exc}. Create the role (docker/postgres-init.sql) "
            "or set QALAB_DB_APP_ROLE, then run the migrate again."
        ) from None
    if verbosity >= 1 and stdout is not None:
        stdout.write(
            f"  Granted {role} SELECT, INSERT, UPDATE, DELETE on the tables of {schema} "
            "(no TRUNCATE, TRIGGER, REFERENCES)\n"
        )
