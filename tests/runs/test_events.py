"""`qalab_run --wait` wakes on a run's change (LISTEN/NOTIFY), not on its next poll (issue 19)."""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.core.management.base import OutputWrapper
from django.db import connection, connections, transaction

from runs import events, services
from runs.events import PollingRunEvents, run_changed, run_events
from runs.management.commands import qalab_run
from runs.models import Run, RunStatus
from runs.services.common import swap_status
from tests.factories import import_demo_org


def _needs_postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("LISTEN/NOTIFY and a second thread need Postgres (make test uses it)")


def _queued_run() -> Run:
    return services.run_create(organization=import_demo_org(), preset="quick", seed=1)


def _later(delay: float, change: Callable[[], object]) -> tuple[threading.Thread, list[float]]:
    """Run `change` on another thread (its own connection) after `delay`; the list gets the
    moment it returned (committed)."""
    done: list[float] = []

    def act() -> None:
        try:
            time.sleep(delay)
            change()
            done.append(time.monotonic())
        finally:
            connections.close_all()

    thread = threading.Thread(target=act)
    thread.start()
    return thread, done


@pytest.mark.django_db(transaction=True)
def test_a_waiter_wakes_at_once_when_another_connection_changes_the_run() -> None:
    _needs_postgres()
    run = _queued_run()
    other = _queued_run()
    with run_events(run.id) as waiter:
        assert not isinstance(waiter, PollingRunEvents)
        thread, done = _later(0.1, lambda: run_changed(other.id))  # another run: no wake
        assert waiter.wait(0.4) is False
        thread.join()
        thread, done = _later(
            0.2, lambda: swap_status(run.id, RunStatus.QUEUED, RunStatus.GENERATING)
        )
        started = time.monotonic()
        assert waiter.wait(5.0) is True
        woke = time.monotonic()
        thread.join()
    assert woke - started < 1.0  # not the 5 s timeout
    assert woke - done[0] < 0.3  # within moments of the commit


@pytest.mark.django_db(transaction=True)
def test_a_change_rolled_back_wakes_nobody() -> None:
    _needs_postgres()
    run = _queued_run()

    def rolled_back() -> None:
        with pytest.raises(RuntimeError), transaction.atomic():
            swap_status(run.id, RunStatus.QUEUED, RunStatus.GENERATING)
            raise RuntimeError("the stage failed")

    with run_events(run.id) as waiter:
        thread, _ = _later(0.05, rolled_back)
        assert waiter.wait(0.4) is False
        thread.join()
    assert Run.objects.get(id=run.id).status == RunStatus.QUEUED


def _wait_command(
    monkeypatch: pytest.MonkeyPatch, run: Run, *, heartbeat: float = 10.0
) -> tuple[qalab_run.Command, io.StringIO]:
    monkeypatch.setattr(qalab_run, "HEARTBEAT_SECONDS", heartbeat)
    err = io.StringIO()
    command = qalab_run.Command()
    command.stderr = OutputWrapper(err)
    return command, err


@pytest.mark.django_db(transaction=True)
def test_wait_returns_moments_after_the_run_ends_not_at_its_next_poll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _needs_postgres()
    run = _queued_run()
    command, err = _wait_command(monkeypatch, run)
    thread, done = _later(0.5, lambda: services.run_mark_error(run_id=run.id, reason="stop"))
    assert command._wait(run, timeout=30) is True
    returned = time.monotonic()
    thread.join()
    assert returned - done[0] < 0.3  # the heartbeat is 10 s, the old poll 1 s
    lines = err.getvalue().splitlines()
    assert lines[0] == "  queued · cases 0/0 · tokens 0 · 0 s"
    assert re.fullmatch(r"  error · cases 0/0 · tokens 0 · \d+ s", lines[-1])


@pytest.mark.django_db(transaction=True)
def test_wait_without_notifications_polls_briefly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQLite path (`make demo`): no NOTIFY, a short poll, same lines."""
    run = _queued_run()

    @contextmanager
    def polling(run_id: int) -> Iterator[PollingRunEvents]:
        yield PollingRunEvents(interval=0.05)

    monkeypatch.setattr(qalab_run, "run_events", polling)
    command, err = _wait_command(monkeypatch, run, heartbeat=0.2)
    if connection.vendor == "postgresql":
        thread, _ = _later(0.5, lambda: services.run_mark_error(run_id=run.id, reason="stop"))
        assert command._wait(run, timeout=30) is True
        thread.join()
    else:  # SQLite: one connection, so the run ends by the timeout
        assert command._wait(run, timeout=1) is False
    lines = err.getvalue().splitlines()
    assert lines[0] == "  queued · cases 0/0 · tokens 0 · 0 s"
    assert len([line for line in lines if line.startswith("  queued · ")]) >= 2  # heartbeats


def test_off_postgres_events_poll_and_notify_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    class Sqlite:
        vendor = "sqlite"

        def cursor(self) -> Any:
            raise AssertionError("no query off Postgres")

    monkeypatch.setattr(events, "connection", Sqlite())
    run_changed(1)
    with run_events(1) as waiter:
        assert isinstance(waiter, PollingRunEvents)
        started = time.monotonic()
        assert waiter.wait(10.0) is False
        assert time.monotonic() - started < 1.0  # a short poll, never the whole timeout
        assert waiter.wait(0.0) is False


@pytest.mark.django_db(transaction=True)
def test_a_listener_that_cannot_connect_falls_back_to_polling(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _needs_postgres()
    monkeypatch.setattr(
        events, "_listen_params", lambda: {"host": "127.0.0.1", "port": 1, "connect_timeout": 2}
    )
    with run_events(7) as waiter:
        assert isinstance(waiter, PollingRunEvents)
    assert "polling instead" in caplog.text
