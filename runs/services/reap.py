"""Housekeeping: end a run in error, and reap work left behind by dead workers."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from runs.budget import settle_orphaned_reservations
from runs.dispatch import Dispatcher
from runs.models import (
    CaseStatus,
    Run,
    RunCase,
    RunStatus,
)
from runs.services.common import (
    UNREPORTED_FINAL,
    run_lock_if_idle,
    run_mark_error,
    worker_gone,
)
from runs.services.simulate import advance_after_cases


def reap_stale_work(*, dispatcher: Dispatcher) -> dict[str, int]:
    """Re-dispatch cases whose lease expired and runs stuck in a stage (lost messages).

    Safe to run at any time: every stage service is idempotent, so a duplicate is harmless.
    """
    now = timezone.now()
    running = RunCase.objects.filter(run__status=RunStatus.SIMULATING, status=CaseStatus.RUNNING)
    stale_cases = list(running.filter(lease_expires_at__lt=now).values_list("id", flat=True))
    # Cases held by a worker process of this host that is gone (stopped, killed): no need to
    # wait for their lease.
    stale_cases += [
        case_id
        for case_id, owner in running.filter(lease_expires_at__gte=now).values_list(
            "id", "lease_owner"
        )
        if worker_gone(owner)
    ]
    stall = now - timedelta(seconds=settings.QALAB_RUN_STALL_SECONDS)
    queued_cases = list(
        RunCase.objects.filter(
            run__status=RunStatus.SIMULATING, status=CaseStatus.QUEUED, run__heartbeat_at__lt=stall
        ).values_list("id", flat=True)
    )
    for case_id in stale_cases + queued_cases:
        dispatcher.simulate(case_id)
    # A live call settles within its timeout (per attempt); only an older reservation is orphaned.
    orphan_age = max(settings.QALAB_CASE_LEASE_SECONDS, 2 * settings.QALAB_LLM_TIMEOUT_SECONDS)
    orphans = settle_orphaned_reservations(older_than=now - timedelta(seconds=orphan_age))
    locked = 0
    for run_id in Run.objects.filter(
        status__in=UNREPORTED_FINAL, locked_at__isnull=True
    ).values_list("id", flat=True):
        # A case whose worker died while its run was ending holds an expired lease forever.
        RunCase.objects.filter(
            run_id=run_id, status=CaseStatus.RUNNING, lease_expires_at__lt=now
        ).update(status=CaseStatus.ERROR, error="worker lost", finished_at=now)
        locked += run_lock_if_idle(run_id)
    stuck = 0
    stuck_runs = Run.objects.filter(locked_at__isnull=True).filter(
        Q(heartbeat_at__lt=stall) | Q(heartbeat_at__isnull=True, created_at__lt=stall)
    )
    for run in stuck_runs:
        if run.status == RunStatus.QUEUED:
            dispatcher.generate(run.id)
        elif run.status == RunStatus.GENERATING:
            run_mark_error(
                run_id=run.id, reason="generation stalled (worker lost); start a new run"
            )
        elif run.status == RunStatus.SIMULATING:
            advance_after_cases(run.id, dispatcher)
        elif run.status == RunStatus.JUDGING:
            dispatcher.judge(run.id)
        elif run.status == RunStatus.REPORTING:
            dispatcher.report(run.id)
        else:
            continue
        stuck += 1
    return {
        "cases": len(stale_cases) + len(queued_cases),
        "runs": stuck,
        "orphaned_reservations": orphans,
        "locked": locked,
    }
