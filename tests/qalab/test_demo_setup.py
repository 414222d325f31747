"""`make demo` on a fresh clone prints no Python warning (issue 35, point 5: it printed
"UserWarning: No directory at: var/staticfiles/"). The demo target's set-up commands are read
from the Makefile and run as it runs them, against a fresh var folder (a temporary SQLite
database); then the web application is loaded as `runserver` loads it, without serving."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _demo_commands() -> list[str]:
    """The recipe of the Makefile's `demo` target, less the line that starts the servers."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^demo:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.MULTILINE)
    assert recipe, "no demo target in the Makefile"
    lines = [line.strip() for line in recipe.group(1).splitlines()]
    return [line.replace("$(PY)", sys.executable) for line in lines if "demo.sh" not in line]


def _run(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_demo_set_up_prints_no_warning(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QALAB_", "DJANGO_"))}
    # A fresh clone: nothing in var/ yet. Warnings fail the command, and none may be printed.
    env.update(QALAB_VAR_DIR=str(tmp_path / "var"), PYTHONWARNINGS="error::UserWarning")
    commands = _demo_commands()
    assert any("migrate" in c for c in commands) and any("qalab_seed_demo" in c for c in commands)
    # What runserver does before it serves: load the WSGI application and its middleware.
    load_app = f"{sys.executable} -c 'import qalab.wsgi'"
    for command in [*commands, f"env -u DATABASE_URL -u CELERY_BROKER_URL {load_app}"]:
        proc = _run(command, env)
        assert proc.returncode == 0, (command, proc.stderr)
        assert "Warning" not in proc.stderr, (command, proc.stderr)
    assert (tmp_path / "var" / "qalab.sqlite3").is_file()
