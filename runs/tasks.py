"""Celery tasks: each takes an id and calls one service (state lives in the database).

`CeleryDispatcher` is how a stage, run by a worker or the web process, hands work on: it
enqueues the next stage's task here once the current transaction commits (ids only).
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_init

from runs import services


class CeleryDispatcher:
    """Enqueue the stage's task once the current transaction commits (ids only)."""

    def generate(self, run_id: int) -> None:
        run_generate_task.delay_on_commit(run_id)

    def simulate(self, case_id: int, *, delay: float | None = None) -> None:
        if delay:
            # A retry for a free slot: nothing to wait for, no transaction is open.
            case_simulate_task.apply_async((case_id,), countdown=delay)
        else:
            case_simulate_task.delay_on_commit(case_id)

    def judge(self, run_id: int) -> None:
        run_judge_task.delay_on_commit(run_id)

    def report(self, run_id: int) -> None:
        run_report_task.delay_on_commit(run_id)


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


@worker_init.connect
def preload_for_the_pool(**_: Any) -> None:
    """Import in the worker's main process, before it forks its pool, what every task would
    otherwise import in each child on first use: the OpenAI SDK (~0.7 s of CPU) and the judge's
    checks (~0.5 s). With a case per child, that was a second of CPU per case, paid again by
    every child, and on a 2-core machine running a whole Quick run at once, seconds of wall
    time (issue 19). The children share the imported pages copy-on-write."""
    import openai.resources.chat.completions  # noqa: F401  (the SDK loads it lazily)

    import qalab.llm.openai_engine  # noqa: F401
    from judge.checks import all_checks

    all_checks()
