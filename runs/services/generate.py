"""The generate stage: fixtures, manifest and blueprints for a run, then its cases."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from generator.pipeline import generate_artifacts
from qalab.llm import BudgetExceeded
from qalab.orgs import organization_get_context
from qalab.redact import redact
from runs.artifacts import (
    load_test_set,
    store_test_set,
)
from runs.dispatch import Dispatcher
from runs.models import (
    Run,
    RunCase,
    RunStatus,
)
from runs.services.common import (
    canonical_hash,
    logger,
    run_lock_if_idle,
    run_mark_error,
    stage_engine,
    stage_fan_out,
    swap_status,
)
from runs.services.preflight import PreflightError, responder_preflight
from runs.services.simulate import advance_after_cases


def run_generate(*, run_id: int, dispatcher: Dispatcher) -> None:
    """queued -> generating -> simulating: build fixtures, manifest and blueprints, create cases.

    Idempotent: a second delivery finds the run no longer queued and does nothing. A budget
    denial ends the run `budget_stopped`; any other failure ends it `error` with the reason.
    """
    if not swap_status(run_id, RunStatus.QUEUED, RunStatus.GENERATING, started_at=timezone.now()):
        return
    run = Run.objects.select_related("organization").get(id=run_id)
    config = run.config
    engine = stage_engine(run, stage="generation")
    if engine is None:
        return
    try:
        preflight = responder_preflight(run, engine=engine)
    except PreflightError as exc:
        logger.warning("run %s: %s", run_id, exc)
        run_mark_error(run_id=run_id, reason=str(exc))
        return
    snapshot: dict[str, Any] = {}
    if preflight is not None:
        snapshot["preflight"] = preflight
    if json_mode := getattr(engine, "json_mode", None):
        snapshot["json_mode"] = json_mode  # the mode in use (with `auto`: the probe's pick)
    if system_role := getattr(engine, "system_role", None):
        snapshot["system_role"] = system_role  # likewise: how system messages are sent
    if snapshot:
        run.source = {**run.source, **snapshot}
        Run.objects.filter(id=run_id).update(source=run.source)
    try:
        context = organization_get_context(organization=run.organization)
        if config.get("reuse_artifacts"):
            artifacts = load_test_set(config["reuse_artifacts"])
        else:
            artifacts = generate_artifacts(
                context,
                scenarios=config["scenarios"],
                max_turns=config["max_turns"],
                mix=tuple(config["mix"]),
                seed=run.seed,
                engine=engine,
                # Dates in scenarios count from the run's reference date (its snapshot), so
                # the same org, preset, seed and as-of date build identical artifacts any day.
                today=run.as_of,
                fan_out=stage_fan_out(engine),
            )
    except BudgetExceeded as exc:
        logger.info("run %s: budget exhausted during generation: %s", run_id, exc)
        if swap_status(
            run_id,
            RunStatus.GENERATING,
            RunStatus.JUDGING,
            stage_detail="budget exhausted while generating",
        ):
            dispatcher.judge(run_id)
        else:  # the run ended meanwhile (cancelled, reaped): its reservations are refused
            run_lock_if_idle(run_id)
        return
    except Exception as exc:
        logger.exception("run %s: generation failed", run_id)
        swap_status(
            run_id,
            RunStatus.GENERATING,
            RunStatus.ERROR,
            error=redact(f"generation failed: {type(exc).__name__}: {exc}"),
            finished_at=timezone.now(),
        )
        return

    with transaction.atomic():
        run = Run.objects.select_for_update().get(id=run_id)
        if run.status != RunStatus.GENERATING:
            return
        store_test_set(run, artifacts)
        hashes = {
            "fixtures": canonical_hash([f.model_dump(mode="json") for f in artifacts.fixtures]),
            "manifest": canonical_hash(artifacts.manifest.model_dump(mode="json")),
            "blueprints": canonical_hash([b.model_dump(mode="json") for b in artifacts.blueprints]),
        }
        # One case per scenario and trial: every trial plays the same blueprint (its customer's
        # plan) against the bot, in a session of its own.
        cases = RunCase.objects.bulk_create(
            RunCase(
                run=run,
                scenario_key=b.key,
                trial=trial,
                scenario_type=b.scenario_type,
                fixture_key=b.fixture_key,
                expected_status=b.expected_status,
            )
            for b in artifacts.blueprints
            for trial in range(1, run.trials + 1)
        )
        Run.objects.filter(id=run_id).update(
            source={**run.source, "artifact_hashes": hashes},
        )
        swap_status(run_id, RunStatus.GENERATING, RunStatus.SIMULATING, stage_detail="")
        for case in RunCase.objects.filter(run_id=run_id).order_by("trial", "scenario_key"):
            dispatcher.simulate(case.id)
    if not cases:
        advance_after_cases(run_id, dispatcher)
