"""The app runs as a role that owns nothing: it cannot truncate, disable or drop the lock.

Against the local Postgres, throwaway roles and a database: the owner role (no superuser, no
CREATEDB) migrates with `migrate --database owner`; the app role then runs Quick runs end to
end, and each way around the lock triggers is refused to it by Postgres.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from psycopg import errors

from qalab.db_roles import grant_statements, migrate_refusal

ROOT = Path(__file__).resolve().parents[2]
ROW_RIGHTS = {"SELECT", "INSERT", "UPDATE", "DELETE"}
EVERY_TABLE_RIGHT = ROW_RIGHTS | {"TRUNCATE", "REFERENCES", "TRIGGER"}


@dataclass
class Lab:
    """The throwaway database, its two roles, and what the app role's runs left behind."""

    server: dict[str, Any]  # psycopg connect kwargs of the superuser (no dbname)
    dbname: str
    owner: str
    app: str
    env: dict[str, str]  # environment of a manage.py run as the app role (owner URL set)
    migrate: subprocess.CompletedProcess[str]
    runs: list[subprocess.CompletedProcess[str]]
    reports: list[dict[str, Any]]

    def connect(self, role: str | None = None) -> psycopg.Connection[Any]:
        kwargs = {**self.server, "dbname": self.dbname}
        if role is not None:
            kwargs.update(user=role, password=None)
        return psycopg.connect(**{k: v for k, v in kwargs.items() if v}, autocommit=True)


def _url(server: dict[str, Any], user: str, dbname: str) -> str:
    return f"postgres://{user}@{server['host']}:{server['port']}/{dbname}"


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("database roles are Postgres-only (make test sets DATABASE_URL)")
    server = {
        "host": db.get("HOST") or "127.0.0.1",
        "port": int(db.get("PORT") or 5432),
        "user": db.get("USER") or "postgres",
        "password": db.get("PASSWORD") or None,
        "dbname": "postgres",
    }
    tag = uuid.uuid4().hex[:10]
    owner, app, dbname = f"qa_owner_{tag}", f"qa_app_{tag}", f"qa_roles_{tag}"
    admin = psycopg.connect(**{k: v for k, v in server.items() if v}, autocommit=True)
    try:
        try:
            admin.execute(f'CREATE ROLE "{owner}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE')
            admin.execute(f'CREATE ROLE "{app}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE')
        except errors.InsufficientPrivilege as exc:
            pytest.skip(f"cannot create Postgres roles as {server['user']}: {exc}")
        admin.execute(f'CREATE DATABASE "{dbname}" OWNER "{owner}"')
        server.pop("dbname")
        tmp = tmp_path_factory.mktemp("db_roles")
        env = {
            **os.environ,
            "DATABASE_URL": _url(server, app, dbname),
            "DATABASE_OWNER_URL": _url(server, owner, dbname),
            "CELERY_BROKER_URL": "memory://",
            "QALAB_VAR_DIR": str(tmp),
        }
        env.pop("QALAB_DB_APP_ROLE", None)
        migrate = _manage(env, "migrate", "--database", "owner", "--noinput")
        runs, reports = [], []
        if migrate.returncode == 0:
            app_env = {k: v for k, v in env.items() if k != "DATABASE_OWNER_URL"}
            runs.append(_manage(app_env, "qalab_seed_demo"))
            for seed in (1, 2):
                out = tmp / f"run{seed}.json"
                args = ("--org", "demo", "--inline", "--scenarios", "2", "--max-turns", "2")
                runs.append(
                    _manage(app_env, "qalab_run", *args, "--seed", str(seed), "--json", str(out))
                )
                if out.exists():
                    reports.append(json.loads(out.read_text()))
        yield Lab(server, dbname, owner, app, env, migrate, runs, reports)
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        admin.execute(f'DROP ROLE IF EXISTS "{app}"')
        admin.execute(f'DROP ROLE IF EXISTS "{owner}"')
        admin.close()


def test_the_owner_migrates_and_the_app_role_runs_quick_runs_end_to_end(lab: Lab) -> None:
    assert lab.migrate.returncode == 0, lab.migrate.stderr
    assert f"Granted {lab.app} SELECT, INSERT, UPDATE, DELETE" in lab.migrate.stdout
    seed, *runs = lab.runs
    assert seed.returncode == 0, seed.stderr
    for run in runs:  # 0 pass, 1 FAIL_CRITICAL: a verdict either way
        assert run.returncode in (0, 1), run.stdout + run.stderr
    assert [r["status"] for r in lab.reports] == ["done", "done"]
    assert all(r["verdict"] for r in lab.reports)
    assert all(c["actual_status"] for r in lab.reports for c in r["cases"])
    with lab.connect(lab.app) as conn:
        locked = conn.execute("SELECT count(*) FROM qa_runs WHERE locked_at IS NOT NULL")
        assert locked.fetchone() == (2,)
        turns = conn.execute("SELECT count(*) FROM qa_run_turns").fetchone()
        assert turns is not None and turns[0] > 0


def test_the_app_role_holds_row_rights_only_now_and_on_new_tables(lab: Lab) -> None:
    with lab.connect() as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
            )
        ]
        assert "qa_run_turns" in tables and "django_migrations" in tables
        for table in tables:
            held = {
                right
                for right in EVERY_TABLE_RIGHT
                if conn.execute(
                    "SELECT has_table_privilege(%s, %s, %s)", (lab.app, table, right)
                ).fetchone()[0]
            }
            assert held == ROW_RIGHTS, table
        owners = conn.execute(
            "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        assert owners == [(lab.owner,)]
    # Default privileges: a table the owner adds later is open to rows, not to TRUNCATE.
    with lab.connect(lab.owner) as conn:
        conn.execute("CREATE TABLE qa_probe (id bigserial PRIMARY KEY, note text)")
    with lab.connect(lab.app) as conn:
        conn.execute("INSERT INTO qa_probe (note) VALUES ('a')")
        conn.execute("UPDATE qa_probe SET note = 'b'")
        assert conn.execute("SELECT note FROM qa_probe").fetchall() == [("b",)]
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("TRUNCATE qa_probe")
        # Rows of the app's own tables stay writable (the run did this through the ORM).
        conn.execute("UPDATE qa_organizations SET name = name || ' (edited)' WHERE slug = 'demo'")


@pytest.mark.parametrize(
    "attack",
    [
        "TRUNCATE qa_run_turns",
        "TRUNCATE qa_llm_calls",
        "TRUNCATE qa_runs CASCADE",
        "SET session_replication_role = replica",
        "ALTER TABLE qa_run_turns DISABLE TRIGGER ALL",
        "ALTER TABLE qa_run_turns DISABLE TRIGGER qa_run_turns_immutable",
        "DROP TRIGGER qa_run_turns_immutable ON qa_run_turns",
        "DROP TRIGGER qa_runs_immutable ON qa_runs",
        pytest.param(
            "CREATE OR REPLACE FUNCTION qa_run_is_locked(rid bigint) RETURNS boolean "
            "AS 'SELECT false' LANGUAGE sql",
            id="replace-the-lock-function",
        ),
        "ALTER TABLE qa_run_turns OWNER TO CURRENT_USER",
    ],
)
def test_the_app_role_cannot_get_around_the_lock(lab: Lab, attack: str) -> None:
    with lab.connect(lab.app) as conn:
        before = conn.execute("SELECT count(*) FROM qa_run_turns").fetchone()
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(attack)
        assert conn.execute("SHOW session_replication_role").fetchone() == ("origin",)
        assert conn.execute("SELECT count(*) FROM qa_run_turns").fetchone() == before
    with lab.connect() as conn:
        triggers = conn.execute(
            "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'O' "
            "AND tgname LIKE 'qa\\_%\\_immutable'"
        ).fetchone()
        assert triggers == (7,)


def test_the_lock_refuses_the_app_role_moving_turns_out_of_a_locked_run(lab: Lab) -> None:
    with lab.connect(lab.app) as conn:
        (first, second) = conn.execute(
            "SELECT min(c.id) FROM qa_run_cases c JOIN qa_runs r ON r.id = c.run_id "
            "WHERE r.locked_at IS NOT NULL GROUP BY c.run_id ORDER BY c.run_id"
        ).fetchall()
        with pytest.raises(errors.RaiseException, match="locked"):
            conn.execute(
                "UPDATE qa_run_turns SET case_id = %s WHERE case_id = %s", (second[0], first[0])
            )
        with pytest.raises(errors.RaiseException, match="locked"):
            conn.execute("DELETE FROM qa_run_turns WHERE case_id = %s", (first[0],))
        moved = conn.execute("SELECT count(*) FROM qa_run_turns WHERE case_id = %s", (first[0],))
        assert moved.fetchone()[0] > 0


def test_a_plain_migrate_as_the_app_role_names_the_fix(lab: Lab) -> None:
    result = _manage(lab.env, "migrate", "--noinput")
    assert result.returncode == 1
    assert "manage.py migrate --database owner" in result.stderr
    assert "Traceback" not in result.stderr


def test_which_migrate_is_refused() -> None:
    app = {"ENGINE": "django.db.backends.postgresql", "NAME": "qalab", "USER": "qalab_app"}
    owner = {**app, "USER": "qalab"}
    assert migrate_refusal("default", {"default": app}) is None  # no owner: as today
    assert migrate_refusal("owner", {"default": app, "owner": owner}) is None
    assert "--database owner" in (migrate_refusal("default", {"default": app, "owner": owner}))
    assert migrate_refusal("default", {"default": app, "owner": app}) is None  # one role
    elsewhere = {**owner, "NAME": "other"}
    assert "NAME differs" in migrate_refusal("owner", {"default": app, "owner": elsewhere})


def test_the_grants_quote_names_and_never_grant_more_than_rows() -> None:
    statements = grant_statements("public", 'a"b')
    assert all('"a""b"' in s for s in statements)
    grants = " ".join(s for s in statements if " GRANT " in f" {s}")
    for right in ("TRUNCATE", "TRIGGER", "REFERENCES", "ALL PRIVILEGES", "OWNER"):
        assert right not in grants
