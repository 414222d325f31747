"""Run events: "run N changed", so a waiter wakes when it happens instead of polling.

Writers call `run_changed(run_id)` when a run's status or lock changes, or one of its cases
finishes. On PostgreSQL that is `pg_notify('qalab_run', '<run_id>')` on the writer's own
connection: inside a transaction Postgres delivers it at commit (never on rollback), so a
waiter that is woken reads the committed row. Elsewhere (SQLite in the demo) it does nothing.

`run_events(run_id)` gives a waiter (`qalab_run --wait`) a `RunEvents`: on PostgreSQL one that
LISTENs on a separate autocommit connection; elsewhere, or when that connection cannot be
opened, one that just sleeps a short `POLL_SECONDS`, so the caller polls. Either way `wait()`
returns by its timeout at the latest, and the caller re-reads the run after every return.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from django.db import connection

logger = logging.getLogger("qalab.runs")

CHANNEL = "qalab_run"
# Where no notification can come: how long a waiter sleeps between two reads of the run.
POLL_SECONDS = 0.25


def run_changed(run_id: int) -> None:
    """Tell waiters that run `run_id` changed (sent at commit; a no-op off PostgreSQL)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, str(run_id)])


class RunEvents(Protocol):
    """Something a waiter blocks on between two reads of a run."""

    def wait(self, seconds: float) -> bool:
        """Return once the run may have changed, after `seconds` at the latest; True when a
        notification for the run woke it (False: a timeout, or a poll interval passed)."""
        ...


class PollingRunEvents:
    """No notifications here: sleep `interval` (at most `seconds`), so the caller polls."""

    def __init__(self, interval: float = POLL_SECONDS) -> None:
        self.interval = interval

    def wait(self, seconds: float) -> bool:
        time.sleep(max(0.0, min(seconds, self.interval)))
        return False


class PgRunEvents:
    """LISTENs for one run's notifications on its own autocommit psycopg 3 connection (a
    waiter's main connection may sit in a transaction, where notifications are held back)."""

    def __init__(self, run_id: int, params: dict[str, Any]) -> None:
        import psycopg

        self.payload = str(run_id)
        self.conn = psycopg.connect(**params, autocommit=True)
        try:
            self.conn.execute(f"LISTEN {CHANNEL}")
        except Exception:
            self.conn.close()
            raise

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            # Read to the generator's end: until then it holds the connection's lock.
            notes = list(self.conn.notifies(timeout=left, stop_after=1))
            if any(note.payload == self.payload for note in notes):
                # Swallow the ones already here too: the caller's next read covers them all.
                list(self.conn.notifies(timeout=0.0))
                return True
        return False

    def close(self) -> None:
        self.conn.close()


def _listen_params() -> dict[str, Any]:
    """The default database's connection parameters as psycopg 3 takes them, without
    Django's cursor and adapter classes."""
    params = dict(connection.get_connection_params())
    for django_only in ("cursor_factory", "context"):
        params.pop(django_only, None)
    return params


@contextmanager
def run_events(run_id: int) -> Iterator[RunEvents]:
    """Events of run `run_id` for the duration of the block: listening starts on entry, so
    a change committed after the caller's first read of the run is never missed."""
    if connection.vendor != "postgresql":
        yield PollingRunEvents()
        return
    try:
        events = PgRunEvents(run_id, _listen_params())
    except Exception as exc:  # e.g. psycopg2 only, or no connection to spare: poll instead
        logger.warning("run %s: cannot LISTEN for run events (%s); polling instead", run_id, exc)
        yield PollingRunEvents()
        return
    try:
        yield events
    finally:
        events.close()
