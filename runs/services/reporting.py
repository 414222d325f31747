"""The report stage: scores and verdict, then the run is locked."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from judge import gate
from qalab.domain import SEVERITIES
from runs.budget import fallback_tally, settle_open_reservations
from runs.events import run_changed
from runs.findings import finding_model
from runs.models import (
    CaseStatus,
    FindingTriage,
    Run,
    RunFinding,
    RunStatus,
    TriageState,
)
from runs.services.carry import triage_carry
from runs.services.missed import missed_carry
from runs.triage import gate_waivers, run_triage_carried


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
        # A lost worker's reservation (killed mid-call, its case resumed elsewhere) is settled
        # before the run is locked: nothing stays reserved, used = the ledger's sum.
        if settle_open_reservations(run_id=run_id):
            run.refresh_from_db()
        if reason := _fallback_refusal(run):
            # The model did not do this run's work: no verdict it did not earn.
            run.status, run.error = RunStatus.ERROR, reason
            run.finished_at = run.locked_at = timezone.now()
            run.save(update_fields=["status", "error", "finished_at", "locked_at"])
            run_changed(run_id)
            return
        # At the latest now: findings stored before carrying existed, or added since judging.
        triage_carry(run=run)
        # Misses reviewers added in earlier runs that this run's bot still says (never gating).
        missed_carry(run=run)
        findings = [f for f in run.findings.all()]
        waived = gate_waivers(findings=findings, carried=run_triage_carried(run=run))
        scores = run_scores(run_case_judgements(run))
        errored = run.cases.filter(status=CaseStatus.ERROR).count()
        verdict = gate.verdict(
            [finding_model(f) for f in findings],
            budget_stopped=run.budget_exhausted,
            errored=errored > 0,
            waived={i for i, f in enumerate(findings) if f.id in waived},
        )
        run.verdict = verdict
        run.verdict_reason = _verdict_reason(run, findings, errored, waived)[:300]
        run.score_groundedness = scores.groundedness
        run.score_extraction = scores.extraction_accuracy
        run.score_quality = scores.conversation_quality
        run.score_overall = scores.overall
        run.status = RunStatus.BUDGET_STOPPED if run.budget_exhausted else RunStatus.DONE
        run.finished_at = timezone.now()
        run.locked_at = run.finished_at
        run.save()
        run_changed(run_id)  # the run is final: `qalab_run --wait` wakes at commit


def _fallback_refusal(run: Run) -> str:
    """Why the run may not have a verdict because too many of its LLM tasks fell back to the
    offline implementation (`config.max_fallback_share`, QALAB_LLM_MAX_FALLBACK_SHARE); ""."""
    limit = run.config.get("max_fallback_share")
    if run.engine == "offline" or limit is None:
        return ""
    fell, tasks = fallback_tally(run.id)
    count = sum(fell.values())
    if not tasks or count / tasks <= limit:
        return ""
    roles = ", ".join(f"{role} {n}" for role, n in fell.items())
    return (
        f"{count} of {tasks} LLM tasks ({count / tasks:.0%}) fell back to the offline "
        f"implementation ({roles}), above QALAB_LLM_MAX_FALLBACK_SHARE={limit:g}: the model did "
        "not do this run's work, so it has no verdict. The ledger's invalid replies say why "
        "(a model too small for the task, replies cut at max_tokens, QALAB_LLM_JSON_MODE)."
    )


def _waiver_text(waived: dict[int, FindingTriage]) -> str:
    """How many critical findings were waived and by whose decision, e.g. "2 critical findings
    waived by alice's won't fix in run 12 (not failing the gate)"."""
    n = len(waived)
    decisions = sorted(
        {
            f"{row.reviewer.get_username() if row.reviewer else 'a reviewer'}'s "
            f"{TriageState(row.state).label.lower()} in run {row.carried_from_run}"
            for row in waived.values()
        }
    )
    who = ", ".join(decisions[:3]) + (
        f" and {len(decisions) - 3} more" if len(decisions) > 3 else ""
    )
    return f"{n} critical finding{'s' if n != 1 else ''} waived by {who} (not failing the gate)"


def _verdict_reason(
    run: Run, findings: list[RunFinding], errored: int, waived: dict[int, FindingTriage]
) -> str:
    gating = [f for f in findings if f.id not in waived]
    counts = {s: sum(1 for f in gating if f.severity == s) for s in SEVERITIES}
    parts = []
    if counts["critical"]:
        # The same invented price in every reply is one issue: say how many distinct ones.
        distinct = len({f.fingerprint for f in gating if f.severity == "critical"})
        text = f"{counts['critical']} critical finding{'s' if counts['critical'] != 1 else ''}"
        if distinct < counts["critical"]:
            text += f" ({distinct} distinct)"
        parts.append(text)
    if run.budget_exhausted:
        skipped = run.cases.filter(status=CaseStatus.SKIPPED_BUDGET).count()
        parts.append(f"token budget exhausted ({skipped} case(s) skipped)")
    if errored:
        parts.append(f"{errored} case(s) errored")
    if waived:
        parts.append(_waiver_text(waived))
        if len(parts) == 1 and (counts["major"] or counts["minor"]):
            parts.append(f"{counts['major']} major and {counts['minor']} minor findings")
    if not parts and (counts["major"] or counts["minor"]):
        parts.append(f"{counts['major']} major and {counts['minor']} minor findings, no critical")
    return "; ".join(parts) or "no findings"
