"""A locked run's rows cannot be changed, moved out of the run, or added to (Postgres triggers).

Each attack runs through the ORM, as any code of the app (or an admin action) would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from runs.models import LlmCall, Run, RunArtifact, RunCase, RunFinding, RunTopAction, RunTurn
from tests.runs.helpers import start_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(demo_org: Any) -> tuple[Run, Run]:
    if connection.vendor != "postgresql":
        pytest.skip("database triggers are Postgres-only")
    locked = start_run(demo_org, responder="canary:invent_price", scenarios=2)
    open_run = start_run(demo_org, scenarios=2, lock=False)
    assert locked.locked_at is not None and open_run.locked_at is None
    assert locked.findings.exists() and locked.top_actions.exists()
    return locked, open_run


def _refused(attempt: Callable[[], Any]) -> None:
    with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
        attempt()


def test_no_row_can_be_moved_out_of_a_locked_run(runs: tuple[Run, Run]) -> None:
    locked, open_run = runs
    other_case = open_run.cases.first()
    for model in (RunFinding, RunTopAction, RunArtifact, LlmCall):
        row = model.objects.filter(run=locked).first()
        assert row is not None, model
        moved = model.objects.filter(pk=row.pk)
        _refused(lambda moved=moved: moved.update(run=open_run))
    _refused(lambda: RunCase.objects.filter(run=locked).update(run=open_run))
    turn = RunTurn.objects.filter(case__run=locked).first()
    _refused(lambda: RunTurn.objects.filter(pk=turn.pk).update(case=other_case))
    # Nothing moved: the locked run still has what it had.
    assert RunTurn.objects.get(pk=turn.pk).case.run_id == locked.id
    assert RunFinding.objects.filter(run=locked).count() == locked.findings.count() > 0


def test_no_row_can_be_moved_into_a_locked_run(runs: tuple[Run, Run]) -> None:
    locked, open_run = runs
    finding = open_run.findings.first() or None
    artifact = open_run.artifacts.first()
    _refused(lambda: RunArtifact.objects.filter(pk=artifact.pk).update(run=locked))
    turn = RunTurn.objects.filter(case__run=open_run).first()
    _refused(lambda: RunTurn.objects.filter(pk=turn.pk).update(case=locked.cases.first()))
    if finding is not None:
        _refused(lambda: RunFinding.objects.filter(pk=finding.pk).update(run=locked))
    # The open run's rows may still change (it is not locked yet).
    RunArtifact.objects.filter(pk=artifact.pk).update(noise_level="clean")


def test_the_ledger_of_a_locked_run_is_append_proof(runs: tuple[Run, Run]) -> None:
    locked, _ = runs
    call = locked.llm_calls.exclude(status="reserved").first()
    assert call is not None
    _refused(lambda: LlmCall.objects.filter(pk=call.pk).update(actual=1))
    _refused(lambda: LlmCall.objects.filter(pk=call.pk).delete())
    _refused(
        lambda: LlmCall.objects.create(run=locked, role="judge", purpose="x", reserved=0, actual=0)
    )
