"""Shared fixtures: the demo org in the database, and a real Celery worker subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The test bots listen on loopback: the outbound policy (QALAB_RESPONDER_ALLOWED_HOSTS, public
# addresses only by default) allows it in tests. Set in the environment for the workers and
# commands the tests start, and in this process's settings (loaded before this file).
TEST_ALLOWED_HOSTS = "127.0.0.0/8,::1"
os.environ.setdefault("QALAB_RESPONDER_ALLOWED_HOSTS", TEST_ALLOWED_HOSTS)


@pytest.fixture(autouse=True, scope="session")
def _loopback_bots_allowed() -> None:
    from django.conf import settings

    from qalab.env import envhosts

    settings.QALAB_RESPONDER_ALLOWED_HOSTS = envhosts("QALAB_RESPONDER_ALLOWED_HOSTS")


@pytest.fixture(autouse=True, scope="session")
def _days_ahead() -> Iterator[None]:
    """`QALAB_TEST_DAYS_AHEAD=365 pytest ...` runs the tests with this process's clock moved that
    many days ahead (time_machine: dates and wall time move, the monotonic clock and the
    database server's do not), to show a test does not depend on today's date."""
    days = int(os.environ.get("QALAB_TEST_DAYS_AHEAD") or 0)
    if not days:
        yield
        return
    import datetime as dt

    import time_machine

    moved = dt.datetime.now(dt.UTC) + dt.timedelta(days=days)
    with time_machine.travel(moved, tick=True):
        yield


@pytest.fixture(autouse=True)
def _no_ci_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs in tests never append to the real job summary when the suite itself runs on GitHub
    Actions; a test that wants one sets GITHUB_STEP_SUMMARY itself."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def fresh_probes() -> Iterator[None]:
    """The openai engine's capability probes (JSON mode, system role) run again for this test's
    server: their answers are cached per endpoint and process."""
    from qalab.llm import _PROBED, _PROBED_ROLES

    _PROBED.clear()
    _PROBED_ROLES.clear()
    yield
    _PROBED.clear()
    _PROBED_ROLES.clear()


@pytest.fixture
def demo_org(db):
    from tests.factories import import_demo_org

    return import_demo_org()


def _database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip(
            "the worker test needs the Postgres test database (make test sets DATABASE_URL)"
        )
    user = s.get("USER") or "postgres"
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{host}:{port}/{s['NAME']}"


@contextmanager
def run_celery_worker(
    *,
    concurrency: int = 2,
    env: dict[str, str] | None = None,
    beat: Path | None = None,
    queue: str | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` subprocess on its own queue, reading the test database.

    Needs a transactional test database (the worker sees committed rows only) and Redis. The
    worker consumes its own queue unless given one (a second worker taking over from a first);
    it leads its own process group (`os.killpg` kills it and its pool at once); with `beat`
    (a schedule file path) it also runs the beat scheduler, and so the reaper. Its log and its
    own output are in the files `worker_output(proc)` names.
    """
    from django.conf import settings

    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        pytest.skip("the worker test needs Redis (make test sets CELERY_BROKER_URL)")
    from qalab.celery import app

    queue = queue or f"qalab-test-{uuid.uuid4().hex[:8]}"
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    full_env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": broker,
        "QALAB_CELERY_QUEUE": queue,
        "DJANGO_SETTINGS_MODULE": "qalab.settings",
        **(env or {}),
    }
    log = ROOT / "var" / f"{queue}.log"
    log.parent.mkdir(exist_ok=True)
    output = log.with_suffix(".out")
    printed = output.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "qalab.celery",
            "worker",
            "-Q",
            queue,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--logfile",
            str(log),
            *(["--beat", "--schedule", str(beat)] if beat else []),
        ],
        cwd=ROOT,
        env=full_env,
        stdout=printed,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # Wait until the worker has connected and is consuming its queue.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if log.exists() and "ready." in log.read_text(errors="replace"):
                break
            if proc.poll() is not None:
                raise RuntimeError(
                    f"celery worker exited: {log.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.3)
        else:
            raise RuntimeError("celery worker did not become ready in 60s")
        yield proc
    finally:
        app.conf.task_default_queue = previous
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        printed.close()
        log.unlink(missing_ok=True)
        output.unlink(missing_ok=True)


def worker_output(proc: subprocess.Popen[bytes]) -> str:
    """Everything a `run_celery_worker` process logged or printed so far."""
    log = Path(proc.args[proc.args.index("--logfile") + 1])  # type: ignore[union-attr,index]
    return "".join(
        p.read_text(errors="replace") for p in (log, log.with_suffix(".out")) if p.exists()
    )


@pytest.fixture
def celery_worker_process(transactional_db) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` (concurrency 2) on its own queue, reading the test database."""
    with run_celery_worker() as proc:
        yield proc
