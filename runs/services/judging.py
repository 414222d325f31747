"""The judge stage: deterministic checks and the LLM review of every case, then Top 5."""

from __future__ import annotations

import re
import threading
from functools import partial

from django.db import transaction

from judge import gate
from judge.actions import top_actions
from judge.engine import judge_case
from judge.llm_actions import phrase_actions
from judge.llm_judge import ReviewResult, review_case
from judge.rules import CASE_ERROR
from judge.schemas import CaseTranscript, Evidence, Finding, TopAction
from qalab.domain import SEVERITY_ORDER
from qalab.llm import BudgetExceeded, RunEnded
from qalab.llm.base import QuotaExhausted
from runs.artifacts import (
    load_blueprint,
    load_case_checks,
    load_fixture,
    load_manifest,
    load_reviews,
    store_review,
)
from runs.dispatch import Dispatcher
from runs.findings import finding_model
from runs.models import (
    CaseStatus,
    Run,
    RunCase,
    RunFinding,
    RunStatus,
    RunTopAction,
)
from runs.services.carry import triage_carry
from runs.services.case_judging import judge_config
from runs.services.common import (
    logger,
    stage_engine,
    stage_fan_out,
    swap_status,
)
from runs.services.simulate import turn_from_row
from runs.triage import action_waivers, run_triage_carried


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
    # The fingerprint ignores numbers (ports, ids, sizes) so the same failure matches across runs;
    # the subject is the error as it was.
    key = re.sub(r"\d+", "#", reason)[:200]
    return Finding(
        rule_id=CASE_ERROR.id,
        severity=CASE_ERROR.severity,
        case_key=case.key,
        turn_index=None,
        subject=reason[:200],
        key=key,
        evidence=[Evidence(source="error", quote=reason[:500])],
        rationale=(
            f"The conversation could not be completed: {reason[:300]}. A responder that fails "
            "answers no customer, and the case's coverage is lost."
        ),
        fix_target=CASE_ERROR.fix_target,
        fix_text=(
            "Make the responder answer every request within the timeout, as one JSON object of "
            "the contract (reply, extracted, status), and keep replies small."
        ),
        effort="M",
        confidence=1.0,
        detector="pipeline",
        fingerprint=gate.fingerprint(CASE_ERROR.id, key),
    )


def case_transcript(run: Run, case: RunCase) -> CaseTranscript:
    """One case as the judge reads it: its blueprint, fixture, turns and final status."""
    return CaseTranscript(
        case_key=case.key,
        blueprint=load_blueprint(run.id, case.scenario_key),
        fixture=load_fixture(run.id, case.fixture_key),
        turns=[turn_from_row(t) for t in case.turns.order_by("index")],
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
    stored = load_reviews(run)
    cases = run.cases.filter(status=CaseStatus.DONE).order_by("scenario_key", "trial")
    if all(c.key in stored for c in cases):
        return stored
    manifest = load_manifest(run.id)
    engine = stage_engine(run, stage="judging")
    if engine is None:
        raise RunEnded(f"run {run.id} ended: its LLM engine could not be set up")
    fan_out = stage_fan_out(engine)
    stopped = threading.Event()  # a denied reservation: reviews not yet begun are not begun

    def review(case: RunCase) -> ReviewResult | None:
        if stopped.is_set():
            return None
        try:
            result = review_case(
                case_transcript(run, case),
                manifest,
                engine=engine,
                purpose=f"judge:{case.key}",
                fan_out=fan_out,
            )
        except BudgetExceeded as exc:
            logger.info("run %s: LLM judge stopped by the budget: %s", run.id, exc)
            stopped.set()
            return None
        store_review(run, case.key, result)
        return result

    todo = [c for c in cases if c.key not in stored]
    # Cases are reviewed side by side; their confirmations too, within each case's pool.
    for case, result in zip(todo, fan_out([partial(review, c) for c in todo]), strict=True):
        if result is not None:
            stored[case.key] = result
    return stored


def run_judge(*, run_id: int, dispatcher: Dispatcher) -> None:
    """judging -> reporting: judge every completed case, store findings, scores and top actions.

    Runs in one transaction holding the run row, so a redelivered message finds the run already
    in `reporting` and does nothing. Deterministic checks are free: they also run on the cases
    a budget stop left completed.
    """
    try:
        reviews = _llm_reviews(run_id)
    except RunEnded:  # its engine could not be set up: the run is ended `error`
        return
    with transaction.atomic():
        run = Run.objects.select_for_update().get(id=run_id)
        if run.status != RunStatus.JUDGING or run.locked_at:
            return
        config = judge_config(run)
        checked = load_case_checks(run)  # what the cases' own workers found when they ended
        cases = {c.key: c for c in run.cases.filter(status=CaseStatus.DONE)}
        findings: list[Finding] = []
        if cases:
            manifest = load_manifest(run.id)
            for key, case in sorted(cases.items()):
                transcript = case_transcript(run, case)
                review = reviews.get(key)
                early = checked.get(key)
                judgement = judge_case(
                    transcript,
                    manifest,
                    config=config,
                    extra=review.findings if review else None,
                    raw=early.findings if early else None,
                    skipped=early.skipped if early else None,
                )
                findings.extend(judgement.findings)
                if judgement.skipped_checks:
                    logger.warning(
                        "run %s case %s: judging deadline passed, skipped: %s",
                        run.id,
                        key,
                        ", ".join(judgement.skipped_checks),
                    )
                case.score_groundedness = judgement.scores.groundedness
                case.score_extraction = judgement.scores.extraction_accuracy
                case.score_quality = judgement.scores.conversation_quality
                case.score_overall = judgement.scores.overall
                case.passed = judgement.passed
                case.unsupported_by_rule = judgement.unsupported_by_rule
                case.skipped_checks = judgement.skipped_checks
                case.truncated_turns = judgement.truncated_turns
                case.save(
                    update_fields=[
                        "score_groundedness",
                        "score_extraction",
                        "score_quality",
                        "score_overall",
                        "passed",
                        "unsupported_by_rule",
                        "skipped_checks",
                        "truncated_turns",
                    ]
                )
        errored_cases = run.cases.filter(status=CaseStatus.ERROR).order_by("scenario_key", "trial")
        findings.extend(_case_error_finding(c) for c in errored_cases)
        cases.update({c.key: c for c in errored_cases})
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
        # A fingerprint the organization triaged before comes back with that decision, and the
        # Top 5 ranks what such decisions set aside below everything that counts.
        triage_carry(run=run)
        waived = action_waivers(findings=rows, carried=run_triage_carried(run=run))
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
            for a in top_actions(findings, waived={i for i, r in enumerate(rows) if r.id in waived})
        )
        swap_status(run_id, RunStatus.JUDGING, RunStatus.REPORTING)
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
    findings = [finding_model(row) for row in finding_rows]
    actions = [
        TopAction.model_validate(
            {
                "rank": row.rank,
                "title": row.title,
                "target_layer": row.target_layer,
                "effort": row.effort,
                "rationale": row.rationale,
                "finding_indexes": [index[i] for i in row.finding_ids if i in index],
            }
        )
        for row in rows
    ]
    engine = stage_engine(run, stage="top actions")
    if engine is None:  # the run is ended `error` with the reason
        return
    try:
        phrased = phrase_actions(actions, findings, engine=engine, purpose="judge:actions")
    except (BudgetExceeded, QuotaExhausted) as exc:
        logger.info("run %s: top actions keep their template wording: %s", run.id, exc)
        return
    for row, action in zip(rows, phrased, strict=True):
        if (row.title, row.rationale) != (action.title, action.rationale):
            row.title, row.rationale = action.title[:300], action.rationale
            row.save(update_fields=["title", "rationale"])
