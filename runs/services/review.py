"""What a reviewer does to a run: cancel it, triage its findings."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from runs.models import (
    GATE_WAIVABLE_STATES,
    CaseStatus,
    FindingTriage,
    Run,
    RunCase,
    RunFinding,
    RunStatus,
    TriageState,
)
from runs.services.common import (
    run_lock_if_idle,
    swap_status,
)

# Stages a reviewer may cancel; `reporting` is left to finish (it takes a moment and locks).
CANCELLABLE_STATUSES = (
    RunStatus.QUEUED,
    RunStatus.GENERATING,
    RunStatus.SIMULATING,
    RunStatus.JUDGING,
)


def run_cancel(*, run_id: int, user: Any = None) -> bool:
    """End a run that is still working `cancelled`; False if it was final or reporting already.

    Compare-and-swap like every other move, so every later stage finds the run no longer in
    its status and does nothing: queued cases are marked `cancelled` and never played, a case
    already talking stops before its next turn, and nothing is judged. The run never gets a
    verdict; it is locked once that last case (or LLM call) is done (`run_lock_if_idle`).
    """
    now = timezone.now()
    who = user.get_username() if getattr(user, "pk", None) else "a reviewer"
    if not swap_status(
        run_id,
        CANCELLABLE_STATUSES,
        RunStatus.CANCELLED,
        stage_detail=f"cancelled by {who}"[:300],
        finished_at=now,
    ):
        return False
    RunCase.objects.filter(run_id=run_id, status=CaseStatus.QUEUED).update(
        status=CaseStatus.CANCELLED, finished_at=now
    )
    run_lock_if_idle(run_id)
    return True


def finding_triage(
    *,
    run: Run,
    finding_ids: list[int],
    state: str,
    note: str = "",
    reviewer: Any = None,
    gate_waived: bool = False,
) -> list[FindingTriage]:
    """Record one triage decision (state + note, by whom, when) on each of the run's findings.

    Append-only: the newest row of a finding is its state, older rows are the audit trail.
    Works on locked runs (the triage table is outside their immutable rows). `gate_waived`
    ("does not fail the gate", won't fix / false positive only) is stored with the decision and
    takes effect in later runs that carry it; this run's verdict never changes. ValueError for
    an unknown state, the gate option with another state, or a finding of another run.
    """
    if state not in TriageState.values:
        raise ValueError(f"unknown triage state {state!r}")
    if gate_waived and state not in GATE_WAIVABLE_STATES:
        raise ValueError(
            "'does not fail the gate' is only for won't fix or false positive, "
            f"not {TriageState(state).label.lower()}"
        )
    ids = set(finding_ids)
    found = set(RunFinding.objects.filter(run=run, id__in=ids).values_list("id", flat=True))
    if not ids or found != ids:
        raise ValueError(f"findings {sorted(ids - found)} are not findings of run {run.id}")
    return FindingTriage.objects.bulk_create(
        FindingTriage(
            run=run,
            finding_id=finding_id,
            state=state,
            note=note.strip(),
            reviewer=reviewer if getattr(reviewer, "pk", None) else None,
            gate_waived=gate_waived,
        )
        for finding_id in sorted(ids)
    )
