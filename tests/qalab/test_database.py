"""A command run against a database that is not migrated says how to fix it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _command(tmp_path: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}",
        "CELERY_BROKER_URL": "memory://",
        **extra_env,
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("qalab_run", "--org", "demo", "--inline"),
        ("qalab_selftest",),
        ("qalab_report", "1"),
        ("qalab_judge", "--dialogues", "tests/data/natural/set_a_dev.jsonl", "--org", "demo"),
    ],
)
def test_an_unmigrated_database_is_a_clear_error_not_a_traceback(tmp_path, args):
    result = _command(tmp_path, *args)
    assert result.returncode == 2
    assert "migration(s) not applied yet" in result.stderr
    assert "python manage.py migrate" in result.stderr
    assert "Traceback" not in result.stderr


def test_with_an_owner_role_the_fix_names_the_owner_migration(tmp_path):
    owner = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    result = _command(tmp_path, "qalab_selftest", DATABASE_OWNER_URL=owner)
    assert result.returncode == 2
    assert "python manage.py migrate --database owner" in result.stderr


def test_judging_a_file_without_an_org_needs_no_database(tmp_path):
    out = tmp_path / "judged.json"
    result = _command(
        tmp_path,
        "qalab_judge",
        "--dialogues",
        "tests/data/natural/set_a_dev.jsonl",
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    assert out.exists()
