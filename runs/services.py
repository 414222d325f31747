"""Writes of the run pipeline (DESIGN §5). Postgres is the state machine; Celery is the doorbell.

Every status change is a compare-and-swap UPDATE that checks its row count, so a lost or
duplicated message can never move a run twice. Each stage service is safe to call again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import socket
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

import judge
from generator import prompts as generator_prompts
from generator.pipeline import generate_artifacts
from generator.schemas import Artifacts, Blueprint, Fixture, Manifest
from judge import gate
from judge.actions import top_actions
from judge.engine import judge_case
from judge.llm_actions import phrase_actions
from judge.llm_judge import ReviewResult, review_case
from judge.schemas import (
    SEVERITY_ORDER,
    CaseTranscript,
    Evidence,
    Finding,
    JudgeConfig,
    TopAction,
    Turn,
)
from qalab.llm import BudgetExceeded, get_engine
from qalab.llm.base import QuotaExhausted
from qalab.llm.prompts import prompt_hashes
from qalab.models import Organization
from qalab.orgs import org_context_hash, organization_get_context, sha256_text
from runs import simulator
from runs.budget import DbLedger
from runs.dispatch import Dispatcher
from runs.models import (
    PENDING_CASE_STATUSES,
    CaseStatus,
    FindingTriage,
    PromotedFixture,
    Run,
    RunArtifact,
    RunCase,
    RunFinding,
    RunStatus,
    RunTopAction,
    RunTurn,
    TriageState,
)
from runs.presets import preset_get
from runs.simulator.adapters import get_responder
from runs.simulator.contract import ChatMessage, IntakeFieldRef, KbEntry, ResponderRequest
from runs.simulator.customer import customer_next_message

logger = logging.getLogger("qalab.runs")

# Every prompt a run can send; their hashes are part of the run's snapshot.
PROMPT_DIRS = (
    generator_prompts.PROMPTS_DIR,
    Path(judge.__file__).resolve().parent / "prompts",
    Path(simulator.__file__).resolve().parent / "prompts",
)


class RunLockedError(Exception):
    """A locked (reported) run is immutable."""


def _canonical_hash(data: Any) -> str:
    return sha256_text(json.dumps(data, sort_keys=True, separators=(",", ":"), default=str))


def _code_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ai-qa-lab")
    except PackageNotFoundError:
        return "unknown"


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _cas(run_id: int, expected: str | tuple[str, ...], new: str, **fields: Any) -> bool:
    """Move the run from `expected` to `new`; False when another worker got there first."""
    expected_set = (expected,) if isinstance(expected, str) else expected
    n = Run.objects.filter(id=run_id, status__in=expected_set, locked_at__isnull=True).update(
        status=new, heartbeat_at=timezone.now(), **fields
    )
    return n == 1


# --------------------------------------------------------------------------- create


def run_create(
    *,
    organization: Organization,
    preset: str = "quick",
    responder_spec: str | None = None,
    scenarios: int | None = None,
    max_turns: int | None = None,
    budget: int | None = None,
    seed: int | None = None,
    reuse_artifacts: int | None = None,
    created_by: Any = None,
) -> Run:
    """Create a queued run with its immutable snapshot (config, settings hash, source metadata).

    Raises ValueError for an unknown preset or responder spec. Does not dispatch.
    """
    chosen = preset_get(preset).with_overrides(
        scenarios=scenarios, max_turns=max_turns, token_budget=budget
    )
    if chosen.scenarios < 1 or chosen.max_turns < 1 or chosen.token_budget < 1:
        raise ValueError("scenarios, max turns and budget must be positive")
    spec = responder_spec or organization.responder or "reference"
    get_responder(spec)  # validates the spec now, not in a worker later
    engine = settings.QALAB_LLM_ENGINE
    models_used = {
        "generator": settings.QALAB_GENERATOR_MODEL,
        "simulator": settings.QALAB_SIMULATOR_MODEL,
        "judge": settings.QALAB_JUDGE_MODEL,
        "responder": settings.QALAB_RESPONDER_MODEL,
    }
    if engine == "offline":
        models_used = {role: "offline" for role in models_used}
    run_seed = seed if seed is not None else secrets.randbelow(2**31)
    if reuse_artifacts is not None:
        source_run = Run.objects.filter(id=reuse_artifacts, organization=organization).first()
        if source_run is None or not source_run.artifacts.filter(kind="manifest").exists():
            raise ValueError(
                f"run {reuse_artifacts} has no test set of organization {organization.slug!r} to reuse"
            )
        blueprints = source_run.artifacts.filter(kind="blueprint").count()
        chosen = chosen.with_overrides(
            scenarios=blueprints, max_turns=source_run.config["max_turns"]
        )
        run_seed = source_run.seed
    context = organization_get_context(organization=organization)
    config = {
        **chosen.as_config(),
        "responder": spec,
        "engine": engine,
        "models": models_used,
        "seed": run_seed,
        "reuse_artifacts": reuse_artifacts,
        "max_concurrent_cases": settings.QALAB_RUN_MAX_CONCURRENT_CASES,
    }
    if engine != "offline":
        config["json_mode"] = settings.QALAB_LLM_JSON_MODE
    source = {
        "org_context_sha256": org_context_hash(context),
        "kb_documents": {d.slug: sha256_text(d.text) for d in context.kb},
        "prompts": prompt_hashes(*PROMPT_DIRS),
        "code_version": _code_version(),
    }
    return Run.objects.create(
        organization=organization,
        preset=chosen.name,
        responder_spec=spec,
        engine=engine,
        models_used=models_used,
        seed=run_seed,
        config=config,
        settings_hash=_canonical_hash(config),
        source=source,
        token_budget=chosen.token_budget,
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )


def run_start(*, run: Run, dispatcher: Dispatcher) -> None:
    """Hand the queued run to the generate stage (after the surrounding transaction commits)."""
    dispatcher.generate(run.id)


# --------------------------------------------------------------------------- generate


def _store_artifacts(run: Run, artifacts: Artifacts) -> list[RunArtifact]:
    rows = []
    for fixture in artifacts.fixtures:
        content = fixture.model_dump_json()
        rows.append(
            RunArtifact(
                run=run,
                kind="fixture",
                key=fixture.key,
                content=content,
                sha256=sha256_text(content),
                noise_level=fixture.noise_level,
                metrics={**fixture.metrics, "line_count": fixture.line_count},
            )
        )
    manifest = artifacts.manifest.model_dump_json()
    rows.append(
        RunArtifact(
            run=run, kind="manifest", key="manifest", content=manifest, sha256=sha256_text(manifest)
        )
    )
    for blueprint in artifacts.blueprints:
        content = blueprint.model_dump_json()
        rows.append(
            RunArtifact(
                run=run,
                kind="blueprint",
                key=blueprint.key,
                content=content,
                sha256=sha256_text(content),
            )
        )
    return RunArtifact.objects.bulk_create(rows)


def _load_artifacts(run_id: int) -> Artifacts:
    """An earlier run's test set, read back from its immutable artifact rows."""
    rows = RunArtifact.objects.filter(run_id=run_id)
    return Artifacts(
        fixtures=[Fixture.model_validate_json(a.content) for a in rows.filter(kind="fixture")],
        manifest=Manifest.model_validate_json(rows.get(kind="manifest").content),
        blueprints=[
            Blueprint.model_validate_json(a.content) for a in rows.filter(kind="blueprint")
        ],
    )


def run_generate(*, run_id: int, dispatcher: Dispatcher) -> None:
    """queued -> generating -> simulating: build fixtures, manifest and blueprints, create cases.

    Idempotent: a second delivery finds the run no longer queued and does nothing. A budget
    denial ends the run `budget_stopped`; any other failure ends it `error` with the reason.
    """
    if not _cas(run_id, RunStatus.QUEUED, RunStatus.GENERATING, started_at=timezone.now()):
        return
    run = Run.objects.select_related("organization").get(id=run_id)
    config = run.config
    engine = get_engine(run.engine, ledger=DbLedger(run_id=run.id))
    try:
        context = organization_get_context(organization=run.organization)
        if config.get("reuse_artifacts"):
            artifacts = _load_artifacts(config["reuse_artifacts"])
        else:
            artifacts = generate_artifacts(
                context,
                scenarios=config["scenarios"],
                max_turns=config["max_turns"],
                mix=tuple(config["mix"]),
                seed=run.seed,
                engine=engine,
                # Dates in scenarios count from the run's creation day, so a re-run of the same
                # seed on another day still builds byte-identical artifacts when reused.
                today=run.created_at.date(),
            )
    except BudgetExceeded as exc:
        logger.info("run %s: budget exhausted during generation: %s", run_id, exc)
        _cas(
            run_id,
            RunStatus.GENERATING,
            RunStatus.JUDGING,
            stage_detail="budget exhausted while generating",
        )
        dispatcher.judge(run_id)
        return
    except Exception as exc:
        logger.exception("run %s: generation failed", run_id)
        _cas(
            run_id,
            RunStatus.GENERATING,
            RunStatus.ERROR,
            error=f"generation failed: {type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        return

    with transaction.atomic():
        run = Run.objects.select_for_update().get(id=run_id)
        if run.status != RunStatus.GENERATING:
            return
        _store_artifacts(run, artifacts)
        hashes = {
            "fixtures": _canonical_hash([f.model_dump(mode="json") for f in artifacts.fixtures]),
            "manifest": _canonical_hash(artifacts.manifest.model_dump(mode="json")),
            "blueprints": _canonical_hash(
                [b.model_dump(mode="json") for b in artifacts.blueprints]
            ),
        }
        cases = RunCase.objects.bulk_create(
            RunCase(
                run=run,
                scenario_key=b.key,
                scenario_type=b.scenario_type,
                fixture_key=b.fixture_key,
                expected_status=b.expected_status,
            )
            for b in artifacts.blueprints
        )
        Run.objects.filter(id=run_id).update(
            source={**run.source, "artifact_hashes": hashes},
        )
        _cas(run_id, RunStatus.GENERATING, RunStatus.SIMULATING, stage_detail="")
        for case in RunCase.objects.filter(run_id=run_id).order_by("scenario_key"):
            dispatcher.simulate(case.id)
    if not cases:
        _advance_after_cases(run_id, dispatcher)


# --------------------------------------------------------------------------- simulate


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
        "lease_owner": _worker_id(),
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
        return None
    return RunCase.objects.select_related("run", "run__organization").get(id=case_id)


def _load_artifact(run_id: int, kind: str, key: str) -> str:
    return RunArtifact.objects.values_list("content", flat=True).get(
        run_id=run_id, kind=kind, key=key
    )


def _finish_case(case: RunCase, status: str, **fields: Any) -> None:
    RunCase.objects.filter(id=case.id, status=CaseStatus.RUNNING).update(
        status=status, finished_at=timezone.now(), lease_expires_at=None, **fields
    )


def _skip_pending_cases(run_id: int, *, reason: str = "") -> None:
    """Cases not started yet: `skipped_budget`, or `error` with `reason` when one is given."""
    pending = RunCase.objects.filter(run_id=run_id, status=CaseStatus.QUEUED)
    if reason:
        pending.update(status=CaseStatus.ERROR, error=reason[:2000], finished_at=timezone.now())
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
        _advance_after_cases(run.id, dispatcher)
        return
    if run.status != RunStatus.SIMULATING:
        _finish_case(case, CaseStatus.ERROR, error=f"run is {run.status}")
        _advance_after_cases(run.id, dispatcher)
        return

    blueprint = Blueprint.model_validate_json(
        _load_artifact(run.id, "blueprint", case.scenario_key)
    )
    fixture = Fixture.model_validate_json(_load_artifact(run.id, "fixture", case.fixture_key))
    manifest = Manifest.model_validate_json(_load_artifact(run.id, "manifest", "manifest"))
    engine = get_engine(run.engine, ledger=DbLedger(run_id=run.id))
    responder = get_responder(run.responder_spec)
    kb = [KbEntry(id=d.id, title=d.title, text=d.text) for d in fixture.documents]
    intake = [
        IntakeFieldRef(key=f.key, label=f.label, required=f.required)
        for f in manifest.intake_fields
    ]

    history = [_turn_from_row(t) for t in case.turns.order_by("index")]
    try:
        while True:
            index = len(history)
            purpose = f"{case.scenario_key}/t{index}"
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
    except BudgetExceeded as exc:
        logger.info("run %s case %s: budget exhausted: %s", run.id, case.scenario_key, exc)
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
        _advance_after_cases(run.id, dispatcher)
        return
    except QuotaExhausted as exc:
        # No case can succeed without quota: end the run now with the endpoint's reason.
        logger.error("run %s: %s", run.id, exc)
        _finish_case(case, CaseStatus.ERROR, error=str(exc)[:2000])
        _skip_pending_cases(run.id, reason=f"not run: {exc}")
        run_mark_error(run_id=run.id, reason=str(exc))
        return
    except Exception as exc:
        logger.warning("run %s case %s failed: %s", run.id, case.scenario_key, exc)
        _finish_case(case, CaseStatus.ERROR, error=f"{type(exc).__name__}: {exc}"[:2000])
        _advance_after_cases(run.id, dispatcher)
        return

    _finish_case(case, CaseStatus.DONE, actual_status=history[-1].status or "" if history else "")
    _advance_after_cases(run.id, dispatcher)


def _chat_pair(turn: Turn) -> list[ChatMessage]:
    return [
        ChatMessage(role="customer", content=turn.customer),
        ChatMessage(role="assistant", content=turn.reply),
    ]


def _turn_from_row(row: RunTurn) -> Turn:
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
                customer_message=customer_message,
                responder_reply=reply,
                extracted=extracted,
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
    return _turn_from_row(row)


def _advance_after_cases(run_id: int, dispatcher: Dispatcher) -> None:
    """Fan-in: when no case is pending any more, exactly one caller moves the run to judging."""
    if RunCase.objects.filter(run_id=run_id, status__in=PENDING_CASE_STATUSES).exists():
        return
    if _cas(run_id, RunStatus.SIMULATING, RunStatus.JUDGING):
        dispatcher.judge(run_id)


# --------------------------------------------------------------------------- judge and report


def _finding_row(
    run: Run, position: int, finding: Finding, cases: dict[str, RunCase]
) -> RunFinding:
    return RunFinding(
        run=run,
        case=cases.get(finding.case_key),
        position=position,
        turn_index=finding.turn_index,
        rule_id=finding.rule_id,
        severity=finding.severity,
        subject=finding.subject[:300],
        evidence=[e.model_dump() for e in finding.evidence],
        rationale=finding.rationale,
        fix_target=finding.fix_target,
        fix_text=finding.fix_text,
        effort=finding.effort,
        confidence=finding.confidence,
        detector=finding.detector,
        fingerprint=finding.fingerprint,
        confirmed=finding.confirmed,
        corroborating=finding.corroborating,
    )


def _case_error_finding(case: RunCase) -> Finding:
    """A case that could not be run is a critical `case_error` finding: the run never passes
    while cases errored, and the report says which and why."""
    reason = case.error or "unknown error"
    # The fingerprint ignores numbers (ports, ids, sizes) so the same failure matches across runs.
    subject = re.sub(r"\d+", "#", reason)[:200]
    return Finding(
        rule_id="case_error",
        severity="critical",
        case_key=case.scenario_key,
        turn_index=None,
        subject=subject,
        evidence=[Evidence(source="error", quote=reason[:500])],
        rationale=(
            f"The conversation could not be completed: {reason[:300]}. A responder that fails "
            "answers no customer, and the case's coverage is lost."
        ),
        fix_target="pipeline",
        fix_text=(
            "Make the responder answer every request within the timeout, as one JSON object of "
            "the contract (reply, extracted, status), and keep replies small."
        ),
        effort="M",
        confidence=1.0,
        detector="pipeline",
        fingerprint=gate.fingerprint("case_error", subject),
    )


def _transcript(run: Run, case: RunCase) -> CaseTranscript:
    return CaseTranscript(
        case_key=case.scenario_key,
        blueprint=Blueprint.model_validate_json(
            _load_artifact(run.id, "blueprint", case.scenario_key)
        ),
        fixture=Fixture.model_validate_json(_load_artifact(run.id, "fixture", case.fixture_key)),
        turns=[_turn_from_row(t) for t in case.turns.order_by("index")],
        actual_status=case.actual_status or None,
    )


def _llm_reviews(run_id: int) -> dict[str, ReviewResult]:
    """The LLM judge's verified review of every completed case (engines other than offline).

    Each review is stored as a `llm_review` artifact as soon as it is made, so a redelivered
    judge message reuses it instead of paying twice. A denied reservation ends the reviews; the
    deterministic checks still judge every case.
    """
    run = Run.objects.get(id=run_id)
    if run.engine == "offline" or run.status != RunStatus.JUDGING:
        return {}
    stored = {
        a.key: ReviewResult.model_validate_json(a.content)
        for a in run.artifacts.filter(kind="llm_review")
    }
    cases = run.cases.filter(status=CaseStatus.DONE).order_by("scenario_key")
    if all(c.scenario_key in stored for c in cases):
        return stored
    manifest = Manifest.model_validate_json(_load_artifact(run.id, "manifest", "manifest"))
    engine = get_engine(run.engine, ledger=DbLedger(run_id=run.id))
    for case in cases:
        if case.scenario_key in stored:
            continue
        try:
            result = review_case(
                _transcript(run, case),
                manifest,
                engine=engine,
                purpose=f"judge:{case.scenario_key}",
            )
        except BudgetExceeded as exc:
            logger.info("run %s: LLM judge stopped by the budget: %s", run.id, exc)
            break
        content = result.model_dump_json()
        RunArtifact.objects.get_or_create(
            run=run,
            kind="llm_review",
            key=case.scenario_key,
            defaults={"content": content, "sha256": sha256_text(content)},
        )
        stored[case.scenario_key] = result
    return stored


def run_judge(*, run_id: int, dispatcher: Dispatcher) -> None:
    """judging -> reporting: judge every completed case, store findings, scores and top actions.

    Runs in one transaction holding the run row, so a redelivered message finds the run already
    in `reporting` and does nothing. Deterministic checks are free: they also run on the cases
    a budget stop left completed.
    """
    reviews = _llm_reviews(run_id)
    with transaction.atomic():
        run = Run.objects.select_for_update().get(id=run_id)
        if run.status != RunStatus.JUDGING or run.locked_at:
            return
        config = JudgeConfig(
            strictness=run.config["strictness"],
            min_score_to_pass=run.config["min_score_to_pass"],
            max_questions_per_turn=run.config.get("max_questions_per_turn", 2),
        )
        cases = {c.scenario_key: c for c in run.cases.filter(status=CaseStatus.DONE)}
        findings: list[Finding] = []
        if cases:
            manifest = Manifest.model_validate_json(_load_artifact(run.id, "manifest", "manifest"))
            for key, case in sorted(cases.items()):
                transcript = _transcript(run, case)
                review = reviews.get(key)
                judgement = judge_case(
                    transcript,
                    manifest,
                    config=config,
                    extra=review.findings if review else None,
                )
                findings.extend(judgement.findings)
                case.score_groundedness = judgement.scores.groundedness
                case.score_extraction = judgement.scores.extraction_accuracy
                case.score_quality = judgement.scores.conversation_quality
                case.score_overall = judgement.scores.overall
                case.passed = judgement.passed
                case.save(
                    update_fields=[
                        "score_groundedness",
                        "score_extraction",
                        "score_quality",
                        "score_overall",
                        "passed",
                    ]
                )
        errored_cases = run.cases.filter(status=CaseStatus.ERROR).order_by("scenario_key")
        findings.extend(_case_error_finding(c) for c in errored_cases)
        cases.update({c.scenario_key: c for c in errored_cases})
        # Findings-first report order: critical -> major -> minor, then case and turn.
        findings.sort(
            key=lambda f: (
                SEVERITY_ORDER[f.severity],
                f.case_key,
                -1 if f.turn_index is None else f.turn_index,
            )
        )
        run.findings.all().delete()
        run.top_actions.all().delete()
        rows = RunFinding.objects.bulk_create(
            _finding_row(run, i, f, cases) for i, f in enumerate(findings)
        )
        # bulk_create sets ids on Postgres and SQLite alike (RETURNING).
        ids = [r.id for r in rows]
        RunTopAction.objects.bulk_create(
            RunTopAction(
                run=run,
                rank=a.rank,
                title=a.title,
                target_layer=a.target_layer,
                effort=a.effort,
                rationale=a.rationale,
                finding_ids=[ids[i] for i in a.finding_indexes],
            )
            for a in top_actions(findings)
        )
        _cas(run_id, RunStatus.JUDGING, RunStatus.REPORTING)
    _phrase_top_actions(run_id)
    dispatcher.report(run_id)


def _phrase_top_actions(run_id: int) -> None:
    """With an LLM engine, let the judge model phrase the top actions from their findings.

    Runs after the judge transaction (no row lock held during the call) and before the run is
    locked. A phrasing that is invalid or states a fact its findings do not hold falls back to
    the template wording; a budget or quota stop keeps the template wording too.
    """
    run = Run.objects.get(id=run_id)
    if run.engine == "offline" or run.status != RunStatus.REPORTING or run.locked_at:
        return
    rows = list(run.top_actions.order_by("rank"))
    if not rows:
        return
    finding_rows = list(run.findings.select_related("case").order_by("position"))
    index = {row.id: i for i, row in enumerate(finding_rows)}
    findings = [_finding_model(row) for row in finding_rows]
    actions = [
        TopAction(
            rank=row.rank,
            title=row.title,
            target_layer=row.target_layer,  # type: ignore[arg-type]
            effort=row.effort,  # type: ignore[arg-type]
            rationale=row.rationale,
            finding_indexes=[index[i] for i in row.finding_ids if i in index],
        )
        for row in rows
    ]
    engine = get_engine(run.engine, ledger=DbLedger(run_id=run.id))
    try:
        phrased = phrase_actions(actions, findings, engine=engine, purpose="judge:actions")
    except (BudgetExceeded, QuotaExhausted) as exc:
        logger.info("run %s: top actions keep their template wording: %s", run.id, exc)
        return
    for row, action in zip(rows, phrased, strict=True):
        if (row.title, row.rationale) != (action.title, action.rationale):
            row.title, row.rationale = action.title[:300], action.rationale
            row.save(update_fields=["title", "rationale"])


def run_report(*, run_id: int) -> None:
    """reporting -> done | budget_stopped: compute run scores and verdict, then lock the run.

    After this the run's rows are immutable. Idempotent.
    """
    from judge.scoring import run_scores
    from runs.selectors import run_case_judgements

    with transaction.atomic():
        run = Run.objects.select_for_update().get(id=run_id)
        if run.status != RunStatus.REPORTING or run.locked_at:
            return
        findings = [f for f in run.findings.all()]
        scores = run_scores(run_case_judgements(run))
        errored = run.cases.filter(status=CaseStatus.ERROR).count()
        verdict = gate.verdict(
            [_finding_model(f) for f in findings],
            budget_stopped=run.budget_exhausted,
            errored=errored > 0,
        )
        run.verdict = verdict
        run.verdict_reason = _verdict_reason(run, findings, errored)
        run.score_groundedness = scores.groundedness
        run.score_extraction = scores.extraction_accuracy
        run.score_quality = scores.conversation_quality
        run.score_overall = scores.overall
        run.status = RunStatus.BUDGET_STOPPED if run.budget_exhausted else RunStatus.DONE
        run.finished_at = timezone.now()
        run.locked_at = run.finished_at
        run.save()


def _finding_model(row: RunFinding) -> Finding:

    return Finding(
        rule_id=row.rule_id,
        severity=row.severity,  # type: ignore[arg-type]
        case_key=row.case.scenario_key if row.case else "",
        turn_index=row.turn_index,
        subject=row.subject,
        evidence=[Evidence.model_validate(e) for e in row.evidence],
        rationale=row.rationale,
        fix_target=row.fix_target,  # type: ignore[arg-type]
        fix_text=row.fix_text,
        effort=row.effort,  # type: ignore[arg-type]
        confidence=row.confidence,
        detector=row.detector,
        fingerprint=row.fingerprint,
        confirmed=row.confirmed,
        corroborating=row.corroborating,
    )


def _verdict_reason(run: Run, findings: list[RunFinding], errored: int) -> str:
    counts = {
        s: sum(1 for f in findings if f.severity == s) for s in ("critical", "major", "minor")
    }
    parts = []
    if counts["critical"]:
        # The same invented price in every reply is one issue: say how many distinct ones.
        distinct = len({f.fingerprint for f in findings if f.severity == "critical"})
        text = f"{counts['critical']} critical finding{'s' if counts['critical'] != 1 else ''}"
        if distinct < counts["critical"]:
            text += f" ({distinct} distinct)"
        parts.append(text)
    if run.budget_exhausted:
        skipped = run.cases.filter(status=CaseStatus.SKIPPED_BUDGET).count()
        parts.append(f"token budget exhausted ({skipped} case(s) skipped)")
    if errored:
        parts.append(f"{errored} case(s) errored")
    if not parts and (counts["major"] or counts["minor"]):
        parts.append(f"{counts['major']} major and {counts['minor']} minor findings, no critical")
    return "; ".join(parts) or "no findings"


# --------------------------------------------------------------------------- housekeeping


def run_mark_error(*, run_id: int, reason: str) -> bool:
    """End a run that cannot go on (e.g. a stage crashed); False if it was already final."""
    return _cas(
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


def reap_stale_work(*, dispatcher: Dispatcher) -> dict[str, int]:
    """Re-dispatch cases whose lease expired and runs stuck in a stage (lost messages).

    Safe to run at any time: every stage service is idempotent, so a duplicate is harmless.
    """
    now = timezone.now()
    stale_cases = list(
        RunCase.objects.filter(
            run__status=RunStatus.SIMULATING, status=CaseStatus.RUNNING, lease_expires_at__lt=now
        ).values_list("id", flat=True)
    )
    stall = now - timedelta(seconds=settings.QALAB_RUN_STALL_SECONDS)
    queued_cases = list(
        RunCase.objects.filter(
            run__status=RunStatus.SIMULATING, status=CaseStatus.QUEUED, run__heartbeat_at__lt=stall
        ).values_list("id", flat=True)
    )
    for case_id in stale_cases + queued_cases:
        dispatcher.simulate(case_id)
    stuck = 0
    stuck_runs = Run.objects.filter(locked_at__isnull=True).filter(
        Q(heartbeat_at__lt=stall) | Q(heartbeat_at__isnull=True, created_at__lt=stall)
    )
    for run in stuck_runs:
        if run.status == RunStatus.QUEUED:
            dispatcher.generate(run.id)
        elif run.status == RunStatus.GENERATING:
            run_mark_error(
                run_id=run.id, reason="generation stalled (worker lost); start a new run"
            )
        elif run.status == RunStatus.SIMULATING:
            _advance_after_cases(run.id, dispatcher)
        elif run.status == RunStatus.JUDGING:
            dispatcher.judge(run.id)
        elif run.status == RunStatus.REPORTING:
            dispatcher.report(run.id)
        else:
            continue
        stuck += 1
    return {"cases": len(stale_cases) + len(queued_cases), "runs": stuck}


# --------------------------------------------------------------------------- review


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
    already talking finishes its conversation, and nothing is judged. The run is not locked
    (a worker may still write that last case's turns); it never gets a verdict.
    """
    now = timezone.now()
    who = user.get_username() if getattr(user, "pk", None) else "a reviewer"
    if not _cas(
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
    return True


def finding_triage(
    *, run: Run, finding_ids: list[int], state: str, note: str = "", reviewer: Any = None
) -> list[FindingTriage]:
    """Record one triage decision (state + note, by whom, when) on each of the run's findings.

    Append-only: the newest row of a finding is its state, older rows are the audit trail.
    Works on locked runs (the triage table is outside their immutable rows). ValueError for an
    unknown state or a finding of another run.
    """
    if state not in TriageState.values:
        raise ValueError(f"unknown triage state {state!r}")
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
        )
        for finding_id in sorted(ids)
    )


class PromoteError(Exception):
    """The fixture was not written; the message says why."""


@dataclass(frozen=True)
class PromoteResult:
    promotion: PromotedFixture
    created: bool


_NAME_PART = re.compile(r"[^a-z0-9]+")


def _name_part(value: str, *, limit: int = 40) -> str:
    """A file-name slug: ASCII letters, digits and single dashes only (no dots, no slashes)."""
    return _NAME_PART.sub("-", value.lower()).strip("-")[:limit].strip("-") or "x"


def _fixtures_dir() -> Path:
    """QALAB_FIXTURES_DIR, created if missing, resolved; refused when it is a symlink."""
    configured = Path(settings.QALAB_FIXTURES_DIR)
    if not configured.is_absolute():
        configured = Path(settings.BASE_DIR) / configured
    if "\x00" in str(configured):
        raise PromoteError("the fixtures folder setting contains a NUL byte")
    if configured.is_symlink():
        raise PromoteError(f"the fixtures folder {configured} is a symlink: refusing to write")
    try:
        configured.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # e.g. a file in its place, or no permission to create it
        raise PromoteError(
            f"the fixtures folder {configured} is not a plain folder: {exc}"
        ) from exc
    if configured.is_symlink() or not configured.is_dir():
        raise PromoteError(f"the fixtures folder {configured} is not a plain folder")
    return configured.resolve()


def _write_new_file(directory: Path, name: str, content: str) -> Path:
    """Create `directory/name` exclusively; never follows a symlink, never overwrites."""
    if "\x00" in name or "\x00" in content:
        raise PromoteError("the fixture contains NUL bytes: not written")
    target = directory / name
    if target.is_symlink():
        raise PromoteError(f"{target} is a symlink: not written")
    if target.resolve().parent != directory or target.name != name:
        raise PromoteError(f"{name!r} would land outside {directory}: not written")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    # Opened relative to the folder's own descriptor, so swapping the folder for a symlink
    # after the checks above cannot redirect the write.
    data = content.encode("utf-8")
    try:
        dir_fd = os.open(
            directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
        )
    except OSError as exc:
        raise PromoteError(f"cannot open the fixtures folder {directory}: {exc}") from exc
    try:
        fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
    except FileExistsError as exc:
        raise PromoteError(f"{target} already exists: not overwritten") from exc
    except OSError as exc:  # no permission, a symlink swapped in (ELOOP), a full disk ...
        raise PromoteError(f"{target} could not be created: {exc}") from exc
    finally:
        os.close(dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        target.unlink(missing_ok=True)
        raise PromoteError(f"{target} could not be written: {exc}") from exc
    return target


def _promote_content(run: Run, case: RunCase, artifact: RunArtifact) -> str:
    import yaml

    fixture = Fixture.model_validate_json(artifact.content)
    manifest = json.loads(_load_artifact(run.id, "manifest", "manifest"))

    def facts(key: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if k != "source"} for row in manifest.get(key, [])]

    header = {
        "organization": run.organization.slug,
        "run": run.id,
        "case": case.scenario_key,
        "scenario": case.scenario_type,
        "fixture": fixture.key,
        "noise_level": fixture.noise_level,
        "metrics": {k: round(v, 4) for k, v in fixture.metrics.items()},
        "fixture_sha256": artifact.sha256,
        "findings": [
            {
                "id": f.id,
                "severity": f.severity,
                "rule": f.rule_id,
                "turn": f.turn_index,
                "subject": f.subject,
            }
            for f in case.findings.order_by("position")
        ],
        "manifest_excerpt": {
            "services": facts("services"),
            "hours": facts("hours"),
            "contacts": facts("contacts"),
            "policies": facts("policies"),
        },
    }
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    body = "\n\n".join(f"# {d.title}\n\n{d.text.rstrip()}" for d in fixture.documents)
    return f"---\n{front}---\n\n{body}\n"


def fixture_promote(*, run: Run, case: RunCase, user: Any = None) -> PromoteResult:
    """Write the case's fixture, with a header (org, run, case, noise level, findings, manifest
    excerpt), into QALAB_FIXTURES_DIR as `<org>-run<id>-<case>-<fixture>-<sha8>.md`.

    The name is built from slugs only, the file is created exclusively inside the folder (never
    outside it, never through a symlink, never over an existing file), and the promotion is
    recorded (who, when, path, sha256). Promoting a fixture whose content was promoted before
    writes nothing and returns that promotion (`created` False). PromoteError otherwise.
    """
    if case.run_id != run.id:
        raise PromoteError(f"case {case.scenario_key} is not a case of run {run.id}")
    artifact = run.artifacts.filter(kind="fixture", key=case.fixture_key).first()
    if artifact is None:
        raise PromoteError(f"run {run.id} has no fixture {case.fixture_key!r}")
    existing = PromotedFixture.objects.filter(
        organization_id=run.organization_id, fixture_sha256=artifact.sha256
    ).first()
    if existing:
        return PromoteResult(existing, created=False)
    content = _promote_content(run, case, artifact)
    name = "-".join(
        [
            _name_part(run.organization.slug),
            f"run{run.id}",
            _name_part(case.scenario_key),
            _name_part(case.fixture_key),
            artifact.sha256[:8],
        ]
    )
    path = _write_new_file(_fixtures_dir(), f"{name}.md", content)
    try:
        with transaction.atomic():
            promotion = PromotedFixture.objects.create(
                organization_id=run.organization_id,
                run=run,
                case_key=case.scenario_key,
                fixture_key=case.fixture_key,
                fixture_sha256=artifact.sha256,
                path=str(path),
                sha256=sha256_text(content),
                promoted_by=user if getattr(user, "pk", None) else None,
            )
    except IntegrityError:
        # Another reviewer promoted the same fixture a moment ago: keep theirs.
        path.unlink(missing_ok=True)
        return PromoteResult(
            PromotedFixture.objects.get(
                organization_id=run.organization_id, fixture_sha256=artifact.sha256
            ),
            created=False,
        )
    except BaseException:
        # Not recorded: remove the file, or it would block every later promote (never overwrite).
        path.unlink(missing_ok=True)
        raise
    return PromoteResult(promotion, created=True)
