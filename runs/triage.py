"""Reading triage carried over by fingerprint: which decisions a run inherited, and which of its
critical findings they let pass the gate. Written by `runs.services.carry`; read by the report
stage (the verdict) and by the report."""

from __future__ import annotations

from runs.models import GATE_WAIVABLE_STATES, FindingTriage, Run, RunFinding

# A case that could not be run is a `case_error` finding: a run with errored cases never passes,
# whatever a reviewer decided about an earlier one.
UNWAIVABLE_RULES = frozenset({"case_error"})


def carried_per_finding(rows: list[FindingTriage]) -> dict[int, FindingTriage]:
    """The carried row of each finding, out of a run's triage rows (newest first)."""
    carried: dict[int, FindingTriage] = {}
    for row in rows:
        if row.carried_from_run is not None:
            carried.setdefault(row.finding_id, row)
    return carried


def run_triage_carried(*, run: Run) -> dict[int, FindingTriage]:
    """The decision each finding of the run inherited from an earlier run (by finding id)."""
    rows = FindingTriage.objects.filter(run=run, carried_from_run__isnull=False)
    return carried_per_finding(list(rows.select_related("reviewer").order_by("-id")))


def gate_waivers(
    *, findings: list[RunFinding], carried: dict[int, FindingTriage]
) -> dict[int, FindingTriage]:
    """The critical findings (by id) that do not fail the gate: the decision they carried (won't
    fix or false positive) says so. Only a carried decision counts: triage in the run itself
    never changes its own verdict, whether it was made before or after the run was locked."""
    waived = {}
    for f in findings:
        row = carried.get(f.id)
        if (
            row is not None
            and row.gate_waived
            and row.state in GATE_WAIVABLE_STATES
            and f.severity == "critical"
            and f.rule_id not in UNWAIVABLE_RULES
        ):
            waived[f.id] = row
    return waived


def action_waivers(*, findings: list[RunFinding], carried: dict[int, FindingTriage]) -> set[int]:
    """The findings (by id) the Top 5 ranks below every finding that counts toward the gate:
    those a carried decision set aside (won't fix or false positive) - a critical one only when
    that decision also says it does not fail the gate (`gate_waivers`: otherwise it still fails
    the run and must lead the Top 5). Like the verdict, only carried decisions count: triage in
    the run itself never reorders its own (locked) Top 5."""
    waived = set(gate_waivers(findings=findings, carried=carried))
    for f in findings:
        row = carried.get(f.id)
        if (
            row is not None
            and f.severity != "critical"
            and row.state in GATE_WAIVABLE_STATES
            and f.rule_id not in UNWAIVABLE_RULES
        ):
            waived.add(f.id)
    return waived
