"""Helpers every stage shares: the run's compare-and-swap, hashes, worker id, logger."""

from __future__ import annotations

import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone

import judge
from generator import prompts as generator_prompts
from qalab.fanout import FanOut, serial, threaded
from qalab.llm import Engine, get_engine
from qalab.orgs import sha256_text
from qalab.redact import redact
from runs import simulator
from runs.budget import DbLedger
from runs.events import run_changed
from runs.models import CaseStatus, LlmCall, Run, RunCase, RunStatus

logger = logging.getLogger("qalab.runs")

# Every prompt a run can send; their hashes are part of the run's snapshot.
PROMPT_DIRS = (
    generator_prompts.PROMPTS_DIR,
    Path(judge.__file__).resolve().parent / "prompts",
    Path(simulator.__file__).resolve().parent / "prompts",
)


def canonical_hash(data: Any) -> str:
    return sha256_text(json.dumps(data, sort_keys=True, separators=(",", ":"), default=str))


def code_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ai-qa-lab")
    except PackageNotFoundError:
        return "unknown"


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def worker_gone(owner: str) -> bool:
    """True when `owner` (a `worker_id`) is a process of this host that no longer runs: a
    worker stopped or killed here, whose cases need not wait for their lease to expire."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's process: only its lease tells
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, someone else's (EPERM)
    return False


def swap_status(run_id: int, expected: str | tuple[str, ...], new: str, **fields: Any) -> bool:
    """Move the run from `expected` to `new`; False when another worker got there first."""
    expected_set = (expected,) if isinstance(expected, str) else expected
    n = Run.objects.filter(id=run_id, status__in=expected_set, locked_at__isnull=True).update(
        status=new, heartbeat_at=timezone.now(), **fields
    )
    if n == 1:
        run_changed(run_id)  # wakes `qalab_run --wait` (at commit, inside a transaction)
    return n == 1


def run_mark_error(*, run_id: int, reason: str) -> bool:
    """End a run that cannot go on (e.g. a stage crashed), and lock it as soon as nothing of it
    is in flight; False if it was already final."""
    ended = swap_status(
        run_id,
        (
            RunStatus.QUEUED,
            RunStatus.GENERATING,
            RunStatus.SIMULATING,
            RunStatus.JUDGING,
            RunStatus.REPORTING,
        ),
        RunStatus.ERROR,
        error=redact(reason)[:2000],
        finished_at=timezone.now(),
    )
    if ended:
        run_lock_if_idle(run_id)
    return ended


def stage_engine(run: Run, *, stage: str) -> Engine | None:
    """The run's LLM engine, metered by its ledger; or None once the run has been ended
    `error` with the reason (a missing key, an endpoint that fails the JSON-mode probe): a
    stage must never be left stuck, nor carry on without the model the run was set up with."""
    try:
        return get_engine(run.engine, ledger=DbLedger(run_id=run.id))
    except Exception as exc:
        logger.exception("run %s: %s: the LLM engine could not be set up", run.id, stage)
        run_mark_error(
            run_id=run.id,
            reason=f"{stage}: the LLM engine could not be set up: {type(exc).__name__}: {exc}",
        )
        return None


def stage_fan_out(engine: Engine) -> FanOut:
    """How a stage runs its independent LLM tasks: side by side, up to QALAB_LLM_CONCURRENCY,
    when they wait on a remote model; one after another with the offline engine (CPU-bound
    work gains nothing from threads) and inside a database transaction (another thread's
    connection could not see its uncommitted rows). Each thread closes its DB connections."""
    workers = int(getattr(settings, "QALAB_LLM_CONCURRENCY", 1))
    if engine.name == "offline" or workers <= 1 or connection.in_atomic_block:
        return serial
    return threaded(workers, after_task=connections.close_all, name="qalab-llm")


# Final statuses a run reaches without a report: locked by `run_lock_if_idle` once nothing of
# theirs is in flight (`done` and `budget_stopped` are locked by the report stage).
UNREPORTED_FINAL = (RunStatus.CANCELLED, RunStatus.ERROR)


def run_lock_if_idle(run_id: int) -> bool:
    """Lock a cancelled or errored run once no case of it is talking and no LLM reservation of
    it is open (either would still write); True if it is locked now.

    Queued cases of such a run never start, so they are closed first. Called when a run ends
    that way, when a case of it finishes, and by the reaper, which also ends work that a dead
    worker left open. A locked run's rows are immutable (database triggers).
    """
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(id=run_id).first()
        if run is None or run.locked_at or run.status not in UNREPORTED_FINAL:
            return False
        closed = CaseStatus.CANCELLED if run.status == RunStatus.CANCELLED else CaseStatus.ERROR
        RunCase.objects.filter(run_id=run_id, status=CaseStatus.QUEUED).update(
            status=closed, finished_at=timezone.now()
        )
        busy = (
            RunCase.objects.filter(run_id=run_id, status=CaseStatus.RUNNING).exists()
            or LlmCall.objects.filter(run_id=run_id, status="reserved").exists()
        )
        if busy:
            return False
        Run.objects.filter(id=run_id).update(locked_at=timezone.now())
        run_changed(run_id)
    logger.info("run %s: %s, nothing in flight: locked", run_id, run.status)
    return True
