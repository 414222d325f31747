"""Writes of the run pipeline (DESIGN §5). Postgres is the state machine; Celery is the doorbell.

Every status change is a compare-and-swap UPDATE that checks its row count, so a lost or
duplicated message can never move a run twice. Each stage service is safe to call again.

One module per stage or concern; this package exposes their public services:

- `create`: run_create, run_start (once per Start run form: run_claim_start_token)
- `judging`: run_judge (checks, LLM review, Top 5)
- `generate`: run_generate                 - `reporting`: run_report (verdict, lock)
- `simulate`: case_simulate, run_record_turn - `reap`: reap_stale_work; `common`: run_mark_error
- `review`: run_cancel, finding_triage     - `promote`: fixture_promote
"""

from __future__ import annotations

from runs.services.common import run_mark_error
from runs.services.create import (
    AlreadyStarted,
    run_claim_start_token,
    run_create,
    run_get_by_start_token,
    run_start,
)
from runs.services.generate import run_generate
from runs.services.judging import run_judge
from runs.services.promote import PromoteError, PromoteResult, fixture_promote
from runs.services.reap import reap_stale_work
from runs.services.reporting import run_report
from runs.services.review import CANCELLABLE_STATUSES, finding_triage, run_cancel
from runs.services.simulate import case_simulate, run_record_turn

__all__ = [
    "CANCELLABLE_STATUSES",
    "AlreadyStarted",
    "PromoteError",
    "PromoteResult",
    "case_simulate",
    "finding_triage",
    "fixture_promote",
    "reap_stale_work",
    "run_cancel",
    "run_claim_start_token",
    "run_create",
    "run_generate",
    "run_get_by_start_token",
    "run_judge",
    "run_mark_error",
    "run_record_turn",
    "run_report",
    "run_start",
]
