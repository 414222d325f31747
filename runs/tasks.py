"""Celery tasks: each takes an id and calls one service (state lives in the database).

`CeleryDispatcher` is how a stage, run by a worker or the web process, hands work on: it
enqueues the next stage's task here once the current transaction commits (ids only).
"""

from __future__ import annotations

import logging
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


WARM_UP_EXAMPLES = 30
logger = logging.getLogger("qalab.runs")


@worker_init.connect
def preload_for_the_pool(**_: Any) -> None:
    """Import and warm up in the worker's main process, before it forks its pool, what every
    task would otherwise load in each child on first use: the OpenAI SDK (~0.7 CPU s), the
    judge's checks (~0.5 s), their compiled patterns and caches (~0.15 s). With a case per
    child, each child paid that again; on a 2-core machine running a whole Quick run at once,
    seconds of wall time (issue 19). The children share the loaded pages copy-on-write."""
    import openai

    import qalab.llm.openai_engine  # noqa: F401

    # A throwaway client, never used for a request: building it and touching its chat
    # resource loads the HTTP stack (httpx, its TLS trust store) and the SDK's lazy modules.
    # Each child builds its own client later (qalab.llm.clients: never shared across a fork).
    throwaway = openai.OpenAI(api_key="warm-up", base_url="http://127.0.0.1:9/v1")
    assert throwaway.chat.completions is not None
    throwaway.close()
    from judge.engine import judge_case
    from judge.examples import CONFIG, demo_manifest, load_examples

    try:  # a few of the checks' own labeled examples, judged once here
        manifest = demo_manifest()
        # Without the semantic layer: its onnxruntime session must not cross the fork (each
        # child loads the model itself, 0.4 s, on its first case).
        config = CONFIG.model_copy(update={"semantic": False})
        for loaded in load_examples()[:WARM_UP_EXAMPLES]:
            judge_case(loaded.example.case(), manifest, config=config)
    except Exception:  # only a warm-up: the worker works without it
        logger.exception("worker warm-up failed; the pool starts cold")
