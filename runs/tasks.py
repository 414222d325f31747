"""Celery tasks: each takes an id and calls one service (state lives in the database)."""

from __future__ import annotations

from celery import shared_task

from runs import services
from runs.dispatch import CeleryDispatcher


@shared_task(acks_late=True, ignore_result=True)
def run_generate_task(run_id: int) -> None:
    """Generate stage of one run; idempotent (see services.run_generate)."""
    services.run_generate(run_id=run_id, dispatcher=CeleryDispatcher())


@shared_task(acks_late=True, ignore_result=True)
def case_simulate_task(case_id: int) -> None:
    """Simulate one case; idempotent, resumes after the last written turn."""
    services.case_simulate(case_id=case_id, dispatcher=CeleryDispatcher())


@shared_task(acks_late=True, ignore_result=True)
def run_judge_task(run_id: int) -> None:
    """Judge stage of one run; idempotent."""
    services.run_judge(run_id=run_id, dispatcher=CeleryDispatcher())


@shared_task(acks_late=True, ignore_result=True)
def run_report_task(run_id: int) -> None:
    """Report stage: verdict, then the run is locked; idempotent."""
    services.run_report(run_id=run_id)


@shared_task(ignore_result=True)
def reap_stale_work_task() -> None:
    """Beat: re-dispatch work whose message was lost or whose worker died."""
    services.reap_stale_work(dispatcher=CeleryDispatcher())
