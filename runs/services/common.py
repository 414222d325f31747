"""Helpers every stage shares: the run's compare-and-swap, hashes, worker id, logger."""

from __future__ import annotations

import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

from django.utils import timezone

import judge
from generator import prompts as generator_prompts
from qalab.orgs import sha256_text
from runs import simulator
from runs.models import (
    Run,
    RunStatus,
)

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


def swap_status(run_id: int, expected: str | tuple[str, ...], new: str, **fields: Any) -> bool:
    """Move the run from `expected` to `new`; False when another worker got there first."""
    expected_set = (expected,) if isinstance(expected, str) else expected
    n = Run.objects.filter(id=run_id, status__in=expected_set, locked_at__isnull=True).update(
        status=new, heartbeat_at=timezone.now(), **fields
    )
    return n == 1


def run_mark_error(*, run_id: int, reason: str) -> bool:
    """End a run that cannot go on (e.g. a stage crashed); False if it was already final."""
    return swap_status(
        run_id,
        (
            RunStatus.QUEUED,
            RunStatus.GENERATING,
            RunStatus.SIMULATING,
            RunStatus.JUDGING,
            RunStatus.REPORTING,
        ),
        RunStatus.ERROR,
        error=reason[:2000],
        finished_at=timezone.now(),
    )
