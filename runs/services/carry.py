"""Triage carries over by fingerprint: a finding the organization already triaged in an earlier
run inherits that decision instead of coming back `open` (read back by `runs.triage`)."""

from __future__ import annotations

from runs.models import GATE_WAIVABLE_STATES, FindingTriage, Run, RunFinding, TriageState


def triage_decisions(*, run: Run, fingerprints: set[str]) -> dict[str, FindingTriage]:
    """The organization's newest decision made by hand on each fingerprint in its runs before
    `run` (by time: a reviewer re-deciding in an older run overrules a newer run's decision).

    Carried rows are copies, not decisions: they are left out, so a decision carried through
    several runs still names the run where it was made. An `open` decision is returned too (it
    is the newest word on that fingerprint, and it is never carried). A real bot's run reads
    decisions made on real bots' runs only, and the lab's own runs (selftest, canary) on theirs:
    a planted fault waved through must not wave through the same defect of a real bot.
    """
    if not fingerprints:
        return {}
    rows = FindingTriage.objects.filter(
        run__organization_id=run.organization_id,
        run_id__lt=run.id,
        carried_from_run__isnull=True,
        finding__fingerprint__in=fingerprints,
    )
    rows = rows.filter(run_id__in=Run.objects.of_side(lab=bool(run.probe)).values("id"))
    rows = rows.select_related("finding").order_by("-created_at", "-id")
    newest: dict[str, FindingTriage] = {}
    for row in rows.iterator():
        newest.setdefault(row.finding.fingerprint, row)
    return newest


def triage_carry(*, run: Run) -> list[FindingTriage]:
    """Give every finding of `run` that has no triage yet the organization's newest earlier
    decision on its fingerprint (state, note, reviewer and gate option), marked as carried from
    the run where it was made. `open` is never carried. Idempotent: a finding that has a row
    (carried or decided by hand) is left alone. Called when the findings are stored and again
    before the verdict, so the gate sees them."""
    triaged = FindingTriage.objects.filter(run=run).values_list("finding_id", flat=True)
    findings = list(
        RunFinding.objects.filter(run=run).exclude(id__in=triaged).only("id", "fingerprint")
    )
    decisions = triage_decisions(run=run, fingerprints={f.fingerprint for f in findings})
    carried = []
    for f in findings:
        source = decisions.get(f.fingerprint)
        if source is None or source.state == TriageState.OPEN:
            continue
        carried.append(
            FindingTriage(
                run=run,
                finding_id=f.id,
                state=source.state,
                note=source.note,
                reviewer_id=source.reviewer_id,
                gate_waived=source.gate_waived and source.state in GATE_WAIVABLE_STATES,
                carried_from_run=source.run_id,
                carried_from=source,
            )
        )
    return FindingTriage.objects.bulk_create(carried)
