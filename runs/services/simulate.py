"""The simulate stage: play one case's conversation against the responder, turn by turn."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from judge.schemas import (
    Turn,
)
from qalab.llm import BudgetExceeded, RunEnded
from qalab.llm.base import QuotaExhausted
from qalab.redact import redact, redact_values
from runs.artifacts import (
    load_blueprint,
    load_fixture,
    load_manifest,
)
from runs.dispatch import Dispatcher
from runs.events import run_changed
from runs.models import (
    PENDING_CASE_STATUSES,
    CaseStatus,
    Run,
    RunCase,
    RunStatus,
    RunTurn,
)
from runs.services.case_judging import judge_ended_case
from runs.services.common import (
    logger,
    run_lock_if_idle,
    run_mark_error,
    stage_engine,
    swap_status,
    worker_gone,
    worker_id,
)
from runs.services.lease import lease_kept
from runs.simulator.adapters import Responder, get_responder
from runs.simulator.contract import ChatMessage, IntakeFieldRef, KbEntry, ResponderRequest
from runs.simulator.customer import customer_next_message

BUSY = "busy"
# How long a case waits for a free slot of its run before asking again.
CASE_RETRY_SECONDS = 1.0


def _claim_case(case_id: int) -> RunCase | str | None:
    """Take the case's lease: a queued case, or a running one whose lease expired.

    A queued case is only started while fewer than the run's `max_concurrent_cases` cases hold
    a live lease (claims are serialized on the run row); otherwise BUSY, and the caller asks
    again a little later. None when the case is not claimable at all.
    """
    now = timezone.now()
    lease = {
        "status": CaseStatus.RUNNING,
        "lease_owner": worker_id(),
        "lease_expires_at": now + timedelta(seconds=settings.QALAB_CASE_LEASE_SECONDS),
        "attempt": F("attempt") + 1,
    }
    with transaction.atomic():
        run_id = RunCase.objects.values_list("run_id", flat=True).get(id=case_id)
        run = Run.objects.select_for_update().only("config").get(id=run_id)
        limit = run.config.get("max_concurrent_cases") or 0
        running = RunCase.objects.filter(
            run_id=run_id, status=CaseStatus.RUNNING, lease_expires_at__gte=now
        ).count()
        queued = RunCase.objects.filter(id=case_id, status=CaseStatus.QUEUED)
        if limit and running >= limit and queued.exists():
            return BUSY
        n = queued.update(started_at=now, **lease)
    if n == 0:
        n = RunCase.objects.filter(
            id=case_id, status=CaseStatus.RUNNING, lease_expires_at__lt=now
        ).update(**lease)
    if n == 0:
        # A worker of this host that was stopped or killed holds a live lease it will never
        # renew: take the case over now rather than when the lease runs out.
        owner = (
            RunCase.objects.filter(id=case_id, status=CaseStatus.RUNNING)
            .values_list("lease_owner", flat=True)
            .first()
        )
        if owner and worker_gone(owner):
            n = RunCase.objects.filter(
                id=case_id, status=CaseStatus.RUNNING, lease_owner=owner
            ).update(**lease)
    if n == 0:
        return None
    return RunCase.objects.select_related("run", "run__organization").get(id=case_id)


def _finish_case(case: RunCase, status: str, **fields: Any) -> None:
    if fields.get("error"):
        fields["error"] = redact(fields["error"])  # may quote a bot's reply or an HTTP error
    if RunCase.objects.filter(id=case.id, status=CaseStatus.RUNNING).update(
        status=status, finished_at=timezone.now(), lease_expires_at=None, **fields
    ):
        run_changed(case.run_id)  # one more case done: a progress line for a waiter


def _skip_pending_cases(run_id: int, *, reason: str = "") -> None:
    """Cases not started yet: `skipped_budget`, or `error` with `reason` when one is given."""
    pending = RunCase.objects.filter(run_id=run_id, status=CaseStatus.QUEUED)
    if reason:
        pending.update(
            status=CaseStatus.ERROR, error=redact(reason)[:2000], finished_at=timezone.now()
        )
    else:
        pending.update(status=CaseStatus.SKIPPED_BUDGET, finished_at=timezone.now())


def case_simulate(*, case_id: int, dispatcher: Dispatcher) -> None:
    """Play one case's conversation, writing each turn as it happens, then finish the case.

    Idempotent: a case that is not claimable (done, or leased by a live worker) is left alone;
    a redelivered case resumes after its last written turn. The worker that finishes the last
    case advances the run to judging (fan-in without chords).
    """
    case = _claim_case(case_id)
    if case is None:
        return
    if case == BUSY:
        dispatcher.simulate(case_id, delay=CASE_RETRY_SECONDS)
        return
    assert isinstance(case, RunCase)
    run = case.run
    if run.budget_exhausted:
        _finish_case(case, CaseStatus.SKIPPED_BUDGET)
        advance_after_cases(run.id, dispatcher)
        return
    if run.status != RunStatus.SIMULATING:
        _finish_case(case, CaseStatus.ERROR, error=f"run is {run.status}")
        advance_after_cases(run.id, dispatcher)
        return

    blueprint = load_blueprint(run.id, case.scenario_key)
    fixture = load_fixture(run.id, case.fixture_key)
    manifest = load_manifest(run.id)
    engine = stage_engine(run, stage="simulation")
    if engine is None:  # the run is ended `error`; this case with it
        _finish_case(case, CaseStatus.ERROR, error="the LLM engine could not be set up")
        run_lock_if_idle(run.id)
        return
    if case.trial > 1:  # records and replays its own replies, not the first trial's
        engine.replay_variant = f"trial {case.trial}"
    kb = [KbEntry(id=d.id, title=d.title, text=d.text) for d in fixture.documents]
    intake = [
        IntakeFieldRef(key=f.key, label=f.label, required=f.required)
        for f in manifest.intake_fields
    ]

    history = [turn_from_row(t) for t in case.turns.order_by("index")]
    with lease_kept(case_id=case.id, run_id=run.id, owner=case.lease_owner):
        try:
            # In the try: a spec this worker cannot use is this case's error, not a task crash.
            responder = _responder_of(run)
            while True:
                if not Run.objects.filter(id=run.id, status=RunStatus.SIMULATING).exists():
                    # Ended (cancelled, errored, timed out) while this case was talking: no
                    # further turn, whether or not the next message needs an LLM call.
                    raise RunEnded(f"run {run.id} ended while case {case.key} talked")
                index = len(history)
                purpose = f"{case.key}/t{index}"
                message = customer_next_message(
                    blueprint, history, engine=engine, purpose=f"customer:{purpose}"
                )
                if message is None:
                    break
                messages = [m for t in history for m in _chat_pair(t)]
                messages.append(ChatMessage(role="customer", content=message))
                request = ResponderRequest(
                    session_id=case.session_id,
                    organization=run.organization.slug,
                    locale=run.organization.locale,
                    kb=kb,
                    intake_fields=intake,
                    messages=messages,
                )
                started = time.monotonic()
                reply = responder.respond(request, engine=engine, purpose=f"responder:{purpose}")
                latency_ms = int((time.monotonic() - started) * 1000)
                turn = run_record_turn(
                    case=case,
                    index=index,
                    customer_message=message,
                    reply=reply.reply,
                    extracted=reply.extracted,
                    status=reply.status or "",
                    usage=reply.usage.model_dump() if reply.usage else {},
                    latency_ms=latency_ms,
                )
                history.append(turn)
            # Judged now, while other cases still talk (the judge stage reuses it).
            judge_ended_case(
                run,
                case,
                blueprint=blueprint,
                fixture=fixture,
                manifest=manifest,
                turns=history,
                engine=engine,
            )
        except RunEnded as exc:
            # Cancelled or errored while this case was talking: it stops at its next turn or
            # LLM call, whichever comes first.
            logger.info("run %s case %s: %s", run.id, case.key, exc)
            _finish_case(
                case,
                CaseStatus.CANCELLED,
                actual_status=history[-1].status or "" if history else "",
                error=f"stopped after {len(history)} turn(s): the run ended",
            )
            advance_after_cases(run.id, dispatcher)
        except BudgetExceeded as exc:
            logger.info("run %s case %s: budget exhausted: %s", run.id, case.key, exc)
            _skip_pending_cases(run.id)
            if history:
                _finish_case(
                    case,
                    CaseStatus.DONE,
                    actual_status=history[-1].status or "",
                    error=f"stopped by the token budget after {len(history)} turn(s)",
                )
            else:
                _finish_case(case, CaseStatus.SKIPPED_BUDGET)
            advance_after_cases(run.id, dispatcher)
            return
        except QuotaExhausted as exc:
            # No case can succeed without quota: end the run now with the endpoint's reason.
            logger.error("run %s: %s", run.id, exc)
            _finish_case(case, CaseStatus.ERROR, error=str(exc)[:2000])
            _skip_pending_cases(run.id, reason=f"not run: {exc}")
            run_mark_error(run_id=run.id, reason=str(exc))
            return
        except Exception as exc:
            logger.warning("run %s case %s failed: %s", run.id, case.key, exc)
            _finish_case(case, CaseStatus.ERROR, error=f"{type(exc).__name__}: {exc}"[:2000])
            advance_after_cases(run.id, dispatcher)
            return

    _finish_case(case, CaseStatus.DONE, actual_status=history[-1].status or "" if history else "")
    advance_after_cases(run.id, dispatcher)


def _responder_of(run: Run) -> Responder:
    """The run's responder as it was snapshotted; ValueError when its spec does not work in
    this worker or its prompt file changed since the run was created."""
    responder = get_responder(run.responder_spec, http=run.config.get("responder_http"))
    recorded = run.source.get("prompts") or {}
    for label, digest in getattr(responder, "prompt_hashes", {}).items():
        if recorded.get(label) != digest:
            raise ValueError(
                f"the responder's prompt {label} changed since run {run.id} was created "
                "(its snapshot holds the old one): start a new run"
            )
    return responder


def _chat_pair(turn: Turn) -> list[ChatMessage]:
    return [
        ChatMessage(role="customer", content=turn.customer),
        ChatMessage(role="assistant", content=turn.reply),
    ]


def turn_from_row(row: RunTurn) -> Turn:
    return Turn(
        index=row.index,
        customer=row.customer_message,
        reply=row.responder_reply,
        extracted={k: str(v) for k, v in row.extracted.items()},
        status=row.responder_status or None,
    )


def run_record_turn(
    *,
    case: RunCase,
    index: int,
    customer_message: str,
    reply: str,
    extracted: dict[str, str],
    status: str,
    usage: dict[str, int],
    latency_ms: int,
) -> Turn:
    """Write one turn. Unique (case, index): a duplicate write keeps the first and returns it."""
    try:
        with transaction.atomic():
            row = RunTurn.objects.create(
                case=case,
                index=index,
                attempt=case.attempt,
                # A bot may echo its auth header or a key from its KB: never stored verbatim.
                customer_message=redact(customer_message),
                responder_reply=redact(reply),
                extracted=redact_values(extracted),
                responder_status=status,
                usage=usage,
                latency_ms=latency_ms,
            )
    except IntegrityError:
        row = RunTurn.objects.get(case=case, index=index)
    now = timezone.now()
    RunCase.objects.filter(id=case.id, status=CaseStatus.RUNNING).update(
        lease_expires_at=now + timedelta(seconds=settings.QALAB_CASE_LEASE_SECONDS)
    )
    Run.objects.filter(id=case.run_id).update(heartbeat_at=now)
    return turn_from_row(row)


def advance_after_cases(run_id: int, dispatcher: Dispatcher) -> None:
    """Fan-in: when no case is pending any more, exactly one caller moves the run to judging."""
    if RunCase.objects.filter(run_id=run_id, status__in=PENDING_CASE_STATUSES).exists():
        return
    if swap_status(run_id, RunStatus.SIMULATING, RunStatus.JUDGING):
        dispatcher.judge(run_id)
    else:
        run_lock_if_idle(run_id)  # the last case of a cancelled or errored run is done
