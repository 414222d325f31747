"""The rows of a run -> its `RunReport` (DESIGN §11), built once: every view and export reads
what `report_build` returns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.db.models import Count, Prefetch, Sum

from judge.engine import judge_layers
from qalab.domain import ArtifactKind
from qalab.llm.base import ROLES
from runs.artifacts import load_reviews
from runs.budget import fallback_tally, judge_held
from runs.models import (
    PENDING_CASE_STATUSES,
    CaseStatus,
    FindingTriage,
    LlmCall,
    MissedFinding,
    Run,
    RunArtifact,
    RunCase,
    RunFinding,
    RunTurn,
    TriageState,
)
from runs.report.corrected import corrected_counts
from runs.report.delta import delta_build, not_played, run_get_previous
from runs.report.groups import group_findings
from runs.report.parts import rounded_scores, severity_counts, severity_sort_key
from runs.report.schema import (
    Case,
    Evidence,
    Finding,
    Fix,
    InProgress,
    Interruption,
    MissedFindingOut,
    RunReport,
    Summary,
    Tokens,
    TopAction,
    Triage,
    TriageCarry,
    TriageCounts,
    Turn,
)
from runs.report.trials import trials_summary, with_trials
from runs.services.missed import run_missed_findings, verdict_with_misses
from runs.triage import carried_per_finding, gate_waivers


def run_tokens(run: Run) -> Tokens:
    by_role = dict.fromkeys(ROLES, 0)
    rows = (
        LlmCall.objects.filter(run=run).values("role").annotate(total=Sum("actual"), n=Count("id"))
    )
    calls = bot_rows = 0
    for row in rows:
        by_role[row["role"]] = row["total"] or 0
        calls += row["n"]
        bot_rows += row["n"] if row["role"] == "responder" else 0
    # A request reserves tokens first; rows that note an invalid reply or a fallback do not.
    requests = LlmCall.objects.filter(run=run, reserved__gt=0).count()
    estimated = LlmCall.objects.filter(run=run, estimated=True, actual__gt=0).exists()
    statuses = Counter(
        status.split(":")[0]
        for status in LlmCall.objects.filter(run=run).values_list("status", flat=True)
    )
    held = judge_held(budget=run.token_budget, engine=run.engine)
    fell, tasks = fallback_tally(run.id)
    return Tokens(
        budget=run.token_budget,
        used=run.tokens_used,
        reserved=run.tokens_reserved,
        by_role=by_role,
        responder_budget=run.responder_token_budget,
        responder_used=run.responder_tokens_used,
        responder_reserved=run.responder_tokens_reserved,
        responder_metered=bot_rows > 0,
        calls=calls,
        requests=requests,
        retries=statuses["retry"],
        invalid=statuses["invalid"],
        fallbacks=statuses["fallback"],
        fallbacks_by_role=fell,
        fallback_share=None
        if run.engine == "offline"
        else round(sum(fell.values()) / tasks, 4)
        if tasks
        else 0.0,
        replayed=statuses["replayed"],
        denied=statuses["denied"],
        orphaned=statuses["orphaned"],
        estimated=estimated,
        note="estimated tokens (chars/4) metered by the offline engine" if estimated else "",
        judge_held=held,
        judge_share=round(held / run.token_budget, 4) if run.token_budget else 0.0,
    )


def unsupported_by_rule(run: Run, cases: list[RunCase]) -> dict[str, int]:
    """Findings the evidence check dropped, by rule: the LLM reviews' (a review stored before
    it counted by rule counts as `llm`) and the judge's, case by case."""
    counts: Counter[str] = Counter()
    for review in load_reviews(run).values():
        counts.update(review.unsupported_by_rule)
        counts["llm"] += review.unsupported - sum(review.unsupported_by_rule.values())
    for case in cases:
        counts.update(case.unsupported_by_rule or {})
    return {rule: n for rule, n in sorted(counts.items()) if n > 0}


def _triage(t: FindingTriage | None) -> Triage:
    if t is None:
        return Triage(
            state=TriageState.OPEN.value,
            note="",
            reviewer=None,
            at=None,
            carried_from=None,
            gate_waived=False,
        )
    # A carried decision was made when its reviewer made it in the earlier run.
    decided = t.carried_from or t
    return Triage(
        state=t.state,
        note=t.note,
        reviewer=t.reviewer.get_username() if t.reviewer else None,
        at=decided.created_at.isoformat(),
        carried_from=t.carried_from_run,
        gate_waived=t.gate_waived,
    )


def _run_triage_rows(run: Run) -> list[FindingTriage]:
    """Every triage row of the run, newest first."""
    rows = FindingTriage.objects.filter(run=run).select_related("reviewer", "carried_from")
    return list(rows.order_by("-id"))


def _newest_per_finding(rows: list[FindingTriage]) -> dict[int, FindingTriage]:
    latest: dict[int, FindingTriage] = {}
    for row in rows:
        latest.setdefault(row.finding_id, row)
    return latest


def run_triage_latest(*, run: Run) -> dict[int, FindingTriage]:
    """The current triage decision of each triaged finding of the run (newest row wins)."""
    return _newest_per_finding(_run_triage_rows(run))


def _triaged_fingerprints(run: Run) -> set[str]:
    """Fingerprints of the run whose findings' current decision is not `open`."""
    rows = FindingTriage.objects.filter(run=run).order_by("-id")
    latest: dict[int, tuple[str, str]] = {}
    for finding_id, state, fingerprint in rows.values_list(
        "finding_id", "state", "finding__fingerprint"
    ):
        latest.setdefault(finding_id, (state, fingerprint))
    return {fp for state, fp in latest.values() if state != TriageState.OPEN}


def triage_carry_counts(
    run: Run, findings: list[RunFinding], carried: dict[int, FindingTriage]
) -> TriageCarry:
    """New (no earlier decision) / carried (inherited one) findings, and the fingerprints
    triaged in the delta's baseline run that no longer appear (resolved), those whose cases
    this run did not play and judge left out (`not_played`: gone without a chance to recur)."""
    base = run_get_previous(run=run)
    present = {f.fingerprint for f in findings}
    resolved = []
    if base:
        gone = _triaged_fingerprints(base) - present
        if gone:
            base_findings = list(base.findings.filter(fingerprint__in=gone).select_related("case"))
            gone -= not_played(run=run, base_findings=base_findings)
        resolved = sorted(gone)
    n_carried = sum(1 for f in findings if f.id in carried)
    return TriageCarry(
        new=len(findings) - n_carried,
        carried=n_carried,
        resolved=len(resolved),
        baseline_run_id=base.id if base else None,
        resolved_fingerprints=resolved,
        gate_waived=len(gate_waivers(findings=findings, carried=carried)),
    )


def count_triage_states(states: Iterable[str]) -> TriageCounts:
    """How many findings are in each triage state (findings never triaged are `open`)."""
    counts = Counter(states)
    return TriageCounts(**{state: counts.get(state, 0) for state in TriageState.values})


def _finding(f: RunFinding, case: str | None, triage: FindingTriage | None = None) -> Finding:
    return Finding(
        id=f.id,
        rule_id=f.rule_id,
        severity=f.severity,
        case=case,
        turn=f.turn_index,
        subject=f.subject,
        evidence=[Evidence(**ev) for ev in f.evidence],
        rationale=f.rationale,
        fix=Fix(target=f.fix_target, text=f.fix_text),
        effort=f.effort,
        confidence=f.confidence,
        detector=f.detector,
        fingerprint=f.fingerprint,
        confirmed=f.confirmed,
        corroborating=f.corroborating,
        triage=_triage(triage),
    )


def _missed(m: MissedFinding) -> MissedFindingOut:
    # A carried miss was added when its reviewer added it in the earlier run.
    added = m.carried_from or m
    return MissedFindingOut(
        rule_id=m.rule_id,
        other_text=m.other_text,
        severity=m.severity,
        case=m.case.key,
        turn=m.turn_index,
        quote=m.quote,
        note=m.note,
        reviewer=m.reviewer.get_username() if m.reviewer else None,
        at=added.created_at.isoformat(),
        carried_from=m.carried_from_run,
        fingerprint=m.fingerprint,
    )


def _turn(t: RunTurn) -> Turn:
    return Turn(
        index=t.index,
        customer=t.customer_message,
        reply=t.responder_reply,
        extracted=t.extracted,
        status=t.responder_status or None,
        usage=t.usage,
        latency_ms=t.latency_ms,
        attempt=t.attempt,
    )


def case_interruptions(case: RunCase, turns: list[RunTurn]) -> list[Interruption]:
    """Each attempt after the first is a takeover: the worker before it stopped renewing its
    lease (killed, or its machine gone), and the new one resumed after the turns kept."""
    return [
        Interruption(
            attempt=attempt,
            after_turn=sum(1 for t in turns if t.attempt < attempt),
            reason=f"the worker of attempt {attempt - 1} was lost (its lease expired); "
            f"attempt {attempt} resumed the conversation",
        )
        for attempt in range(2, case.attempt + 1)
    ]


def _in_progress(run: Run, cases: list[RunCase]) -> InProgress:
    done = sum(1 for c in cases if c.status not in PENDING_CASE_STATUSES)
    return InProgress(
        stage=run.status,
        detail=run.stage_detail,
        cases_done=done,
        cases_total=len(cases),
        note=f"in progress ({run.status}, {done}/{len(cases)} cases): no verdict yet; findings, "
        "scores and top actions are final only when the run is",
    )


def run_get_findings(run: Run) -> list[RunFinding]:
    """Findings critical -> major -> minor, in judge order within a severity (their cases not
    loaded: `report_build` names them from the cases it has)."""
    return sorted(run.findings.all(), key=severity_sort_key)


def run_judge_layers(run: Run) -> list[str]:
    """The judge's layers the run had, from its snapshot."""
    return judge_layers(
        semantic=bool(run.config.get("semantic", {}).get("on")), llm=run.engine != "offline"
    )


def report_build(*, run: Run, include_delta: bool = True) -> RunReport:
    """The report of DESIGN §11 (plus verdict, reason, fixtures and case errors), built once
    from the run's rows; with the delta against the previous reported run unless told not to."""
    cases = list(
        RunCase.objects.filter(run=run)
        .order_by("scenario_key", "trial")
        .prefetch_related(Prefetch("turns", queryset=RunTurn.objects.order_by("index")))
    )
    findings = run_get_findings(run)
    fixtures = {
        a.key: a
        for a in run.artifacts.filter(kind=ArtifactKind.FIXTURE).only(
            "key", "noise_level", "metrics", "sha256"
        )
    }
    triage_rows = _run_triage_rows(run)
    triage = _newest_per_finding(triage_rows)
    case_keys = {c.id: c.key for c in cases}
    report_findings = [
        _finding(f, case_keys[f.case_id] if f.case_id else None, triage.get(f.id)) for f in findings
    ]
    report_cases = [_case(c, fixtures) for c in cases]
    groups = with_trials(group_findings(report_findings), report_cases, run.trials)
    unsupported = unsupported_by_rule(run, cases)
    misses = run_missed_findings(run=run) if run.locked_at else []
    return RunReport(
        run_id=run.id,
        organization=run.org_slug,
        preset=run.preset,
        status=run.status,
        verdict=(run.verdict or None) if run.is_final else None,
        verdict_reason=run.verdict_reason if run.is_final else "",
        in_progress=None if run.is_final else _in_progress(run, cases),
        engine=run.engine,
        models=run.models_used,
        responder=run.responder_spec,
        bot_called=run.bot_called,
        bot_not_called=run.bot_not_called or None,
        probe=run.probe,
        settings_hash=run.settings_hash,
        seed=run.seed,
        as_of=run.as_of.isoformat(),
        judge_layers=run_judge_layers(run),
        config=run.config,
        source=run.source,
        started_at=run.started_at.isoformat() if run.started_at else None,
        finished_at=run.finished_at.isoformat() if run.finished_at else None,
        error=run.error or None,
        tokens=run_tokens(run),
        scores=rounded_scores(
            run.score_groundedness, run.score_extraction, run.score_quality, run.score_overall
        ),
        summary=Summary(
            cases=len(cases),
            completed=sum(1 for c in cases if c.status == CaseStatus.DONE),
            passed=sum(1 for c in cases if c.passed),
            errored=sum(1 for c in cases if c.status == CaseStatus.ERROR),
            skipped_budget=sum(1 for c in cases if c.status == CaseStatus.SKIPPED_BUDGET),
            interrupted=sum(1 for c in cases if c.attempt > 1),
            findings=severity_counts(f.severity for f in findings),
            issues=severity_counts(g.severity for g in groups),
            unsupported_findings=sum(unsupported.values()),
            unsupported_by_rule=unsupported,
            triage=count_triage_states(f.triage.state for f in report_findings),
            carry=triage_carry_counts(run, findings, carried_per_finding(triage_rows)),
        ),
        findings=report_findings,
        finding_groups=groups,
        missed_findings=[_missed(m) for m in misses],
        verdict_with_missed=verdict_with_misses(run=run, misses=misses),
        corrected=corrected_counts(run, findings),
        top_actions=[
            TopAction(
                rank=a.rank,
                title=a.title,
                target_layer=a.target_layer,
                effort=a.effort,
                rationale=a.rationale,
                finding_ids=a.finding_ids,
            )
            for a in run.top_actions.order_by("rank")
        ],
        trials=trials_summary(report_cases, groups, run.trials),
        cases=report_cases,
        delta=delta_build(run=run) if include_delta else None,
    )


def _case(c: RunCase, fixtures: dict[str, RunArtifact]) -> Case:
    """One case of the report, with its turns (prefetched)."""
    fixture = fixtures.get(c.fixture_key)
    return Case(
        id=c.key,
        scenario_key=c.scenario_key,
        trial=c.trial,
        scenario=c.scenario_type,
        fixture=c.fixture_key,
        noise_level=fixture.noise_level if fixture else None,
        fixture_metrics=fixture.metrics if fixture else {},
        session_id=c.session_id,
        status=c.status,
        error=c.error or None,
        expected_status=c.expected_status,
        actual_status=c.actual_status or None,
        turns=[_turn(t) for t in c.turns.all()],
        attempts=max(c.attempt, 1),
        interruptions=case_interruptions(c, list(c.turns.all())),
        scores=rounded_scores(
            c.score_groundedness, c.score_extraction, c.score_quality, c.score_overall
        ),
        **{"pass": c.passed},
        unsupported_by_rule=c.unsupported_by_rule or {},
        skipped_checks=c.skipped_checks or [],
        truncated_turns=c.truncated_turns or [],
    )
