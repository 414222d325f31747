"""An LLM engine that cannot be set up (a missing key, an endpoint failing the JSON-mode probe)
ends the run `error` with the reason in every stage: never a run stuck in a stage."""

from __future__ import annotations

from typing import Any

import pytest

from runs import services
from runs.models import CaseStatus, Run, RunStatus
from tests.runs.helpers import RecordingDispatcher, generate_only

pytestmark = pytest.mark.django_db

REASON = "json_schema probe: HTTP 500 from the endpoint"


def _broken_engine(monkeypatch: Any) -> None:
    def broken(name: str, **kwargs: Any) -> Any:
        raise RuntimeError(REASON)

    monkeypatch.setattr("runs.services.common.get_engine", broken)


def _assert_ended(run: Run, stage: str) -> None:
    run.refresh_from_db()
    assert run.status == RunStatus.ERROR and run.locked_at is not None
    assert run.error == f"{stage}: the LLM engine could not be set up: RuntimeError: {REASON}"


def test_generation(demo_org: Any, monkeypatch: Any) -> None:
    run = services.run_create(organization=demo_org, scenarios=1, seed=3)
    _broken_engine(monkeypatch)
    dispatcher = RecordingDispatcher()
    services.run_generate(run_id=run.id, dispatcher=dispatcher)
    _assert_ended(run, "generation")
    assert dispatcher.calls == [] and not run.cases.exists()


def test_simulation(demo_org: Any, monkeypatch: Any) -> None:
    run = generate_only(demo_org, scenarios=2)
    _broken_engine(monkeypatch)
    first, second = run.cases.order_by("scenario_key")
    services.case_simulate(case_id=first.id, dispatcher=RecordingDispatcher())
    _assert_ended(run, "simulation")
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == CaseStatus.ERROR and "could not be set up" in first.error
    assert second.status == CaseStatus.ERROR  # never started: closed with the run


def test_judging(demo_org: Any, monkeypatch: Any) -> None:
    run = generate_only(demo_org, scenarios=1)
    dispatcher = RecordingDispatcher()
    for case in run.cases.all():
        services.case_simulate(case_id=case.id, dispatcher=dispatcher)
    run.refresh_from_db()
    assert run.status == RunStatus.JUDGING
    Run.objects.filter(id=run.id).update(engine="openai")  # the LLM judge would review it
    _broken_engine(monkeypatch)
    services.run_judge(run_id=run.id, dispatcher=dispatcher)
    _assert_ended(run, "judging")
    assert ("report", run.id) not in dispatcher.calls
