"""How a run ends without a report (cancelled, errored): it spends nothing more, work a dead
worker left open is settled, and it is locked once nothing of it is in flight."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.models import Sum
from django.utils import timezone

from qalab.llm import RunEnded, Usage
from runs import services
from runs.budget import DbLedger
from runs.models import CaseStatus, LlmCall, Run, RunCase, RunStatus
from tests.runs.helpers import RecordingDispatcher, generate_only

pytestmark = pytest.mark.django_db


def _age(call_id: int, seconds: float) -> None:
    LlmCall.objects.filter(id=call_id).update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


def _ledger_matches(run: Run) -> None:
    run.refresh_from_db()
    spent = run.llm_calls.aggregate(n=Sum("actual"))["n"] or 0
    assert run.tokens_used == spent and run.tokens_reserved == 0


def test_the_reaper_settles_a_reservation_a_dead_worker_left_open(
    demo_org: Any, settings: Any
) -> None:
    run = generate_only(demo_org, scenarios=1)
    ledger = DbLedger(run_id=run.id)
    dead = ledger.reserve(role="simulator", purpose="customer:sc-01/t0", tokens=700)
    live = ledger.reserve(role="simulator", purpose="customer:sc-01/t1", tokens=300)
    _age(dead, settings.QALAB_CASE_LEASE_SECONDS + 5)
    before = Run.objects.get(id=run.id).tokens_used

    outcome = services.reap_stale_work(dispatcher=RecordingDispatcher())

    assert outcome["orphaned_reservations"] == 1
    orphan = LlmCall.objects.get(id=dead)
    assert orphan.status == "orphaned" and orphan.actual == 700  # charged in full
    assert LlmCall.objects.get(id=live).status == "reserved"  # a call still in flight
    run.refresh_from_db()
    assert run.tokens_used == before + 700 and run.tokens_reserved == 300
    ledger.settle(live, usage=Usage(prompt_tokens=100, completion_tokens=20, estimated=False), status="ok",
                  latency_ms=5)  # fmt: skip
    _ledger_matches(run)
    assert services.reap_stale_work(dispatcher=RecordingDispatcher())["orphaned_reservations"] == 0


def test_an_errored_run_spends_nothing_more_and_is_locked_once_its_last_call_settles(
    demo_org: Any,
) -> None:
    run = generate_only(demo_org, scenarios=2)
    ledger = DbLedger(run_id=run.id)
    in_flight = ledger.reserve(role="generator", purpose="in-flight-call", tokens=400)

    assert services.run_mark_error(run_id=run.id, reason="generation stalled") is True
    run.refresh_from_db()
    assert run.status == RunStatus.ERROR and run.locked_at is None  # a call is still open
    assert set(run.cases.values_list("status", flat=True)) == {CaseStatus.ERROR}

    with pytest.raises(RunEnded, match="has ended"):
        ledger.reserve(role="generator", purpose="late-call", tokens=400)
    assert not run.llm_calls.filter(purpose="late-call").exists()
    run.refresh_from_db()
    assert run.budget_exhausted is False  # refused because it ended, not for the budget

    ledger.settle(in_flight, usage=None, status="ok", latency_ms=9)
    services.reap_stale_work(dispatcher=RecordingDispatcher())
    run.refresh_from_db()
    assert run.locked_at is not None
    _ledger_matches(run)
    if connection.vendor == "postgresql":
        with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
            Run.objects.filter(id=run.id).update(error="rewritten")


def test_a_case_whose_worker_died_after_its_run_was_cancelled_is_closed_and_the_run_locked(
    demo_org: Any,
) -> None:
    run = generate_only(demo_org, scenarios=2)
    first = run.cases.order_by("scenario_key").first()
    RunCase.objects.filter(id=first.id).update(
        status=CaseStatus.RUNNING, lease_expires_at=timezone.now() + timedelta(seconds=60)
    )
    assert services.run_cancel(run_id=run.id) is True
    run.refresh_from_db()
    assert run.locked_at is None  # the case holds a live lease: its worker may still write

    RunCase.objects.filter(id=first.id).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    outcome = services.reap_stale_work(dispatcher=RecordingDispatcher())
    run.refresh_from_db()
    first.refresh_from_db()
    assert outcome["locked"] == 1 and run.locked_at is not None
    assert first.status == CaseStatus.ERROR and first.error == "worker lost"
