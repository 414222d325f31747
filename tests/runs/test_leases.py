"""A case's lease outlives a reply slower than the lease: no second worker gets the same turn."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from runs import services
from runs.budget import DbLedger
from runs.models import LlmCall, Run, RunStatus
from tests.factories import import_demo_org
from tests.runs.helpers import RecordingDispatcher, generate_only, start_run


@pytest.mark.django_db(transaction=True)
def test_a_reply_slower_than_the_lease_keeps_its_case(settings: Any) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("a second thread needs a shared database (make test uses Postgres)")
    org = import_demo_org()
    settings.QALAB_CASE_LEASE_SECONDS = 0.3  # each reply of `slow` takes 0.5 s
    finished = threading.Event()
    failures: list[BaseException] = []

    def play() -> None:
        try:
            start_run(org, responder="python:tests.responders:slow", scenarios=1, seed=5)
        except BaseException as exc:  # reported by the test, not lost in the thread
            failures.append(exc)
        finally:
            connections.close_all()
            finished.set()

    player = threading.Thread(target=play)
    player.start()
    taken_over: list[int] = []
    reaped_while_talking = 0
    while not finished.wait(0.05):
        if Run.objects.filter(status=RunStatus.SIMULATING).exists():
            recorder = RecordingDispatcher()
            services.reap_stale_work(dispatcher=recorder)  # what beat does, 20 times a second
            taken_over += [case for stage, case in recorder.calls if stage == "simulate"]
            reaped_while_talking += 1
    player.join()

    assert failures == []
    run = Run.objects.get()
    assert run.status == RunStatus.DONE
    case = run.cases.get()
    assert case.turns.filter(latency_ms__gte=450).count() >= 2  # replies outlasted the lease
    assert reaped_while_talking >= 10
    assert taken_over == []  # the lease was renewed mid-call: nothing for the reaper to take
    assert case.attempt == 1 and set(case.turns.values_list("attempt", flat=True)) == {1}


@pytest.mark.django_db
def test_a_reservation_younger_than_a_call_can_last_is_not_orphaned(
    demo_org: Any, settings: Any
) -> None:
    """Even with a short lease, a call still within its timeout is not charged as orphaned."""
    settings.QALAB_CASE_LEASE_SECONDS = 10
    settings.QALAB_LLM_TIMEOUT_SECONDS = 60
    run = generate_only(demo_org, scenarios=1)
    ledger = DbLedger(run_id=run.id)
    live = ledger.reserve(role="judge", purpose="review:sc-01", tokens=500)
    LlmCall.objects.filter(id=live).update(created_at=timezone.now() - timedelta(seconds=30))
    assert services.reap_stale_work(dispatcher=RecordingDispatcher())["orphaned_reservations"] == 0
    LlmCall.objects.filter(id=live).update(created_at=timezone.now() - timedelta(seconds=125))
    assert services.reap_stale_work(dispatcher=RecordingDispatcher())["orphaned_reservations"] == 1
