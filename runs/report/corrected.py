"""The judge's critical and major counts corrected for its false alarms (issue 36, point 4), by
each rule's precision on the organization's own triage labels (`runs.accuracy`).

The estimator (`judge.agreement.corrected_count`): a rule that reported c findings and whose
labels say it is right with precision p has about c·p real ones; the counts of a severity are
summed over its rules, and the 95% interval sums each rule's Wilson bounds (conservative: as if
the rules erred together). It needs `CORRECTION_MIN_LABELS` labels for every rule with findings
of that severity; otherwise there is no estimate and the note names the rules that lack them.
Labels are those of the organization's real bots' runs (a run of the lab's own reads the lab's),
made by hand, the run's own included. It corrects false alarms only: misses reviewers added are
listed apart (`missed_findings`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from judge.agreement import Precision, corrected_count
from runs.accuracy import rule_precision, triage_labels
from runs.models import Run, RunFinding
from runs.report.schema import CorrectedCount, CorrectedCounts

# Labels a rule needs before its findings' count is corrected by its precision.
CORRECTION_MIN_LABELS = 10


def _one(
    severity: str, findings: Sequence[RunFinding], precision: dict[str, Precision]
) -> CorrectedCount:
    reported = Counter(f.rule_id for f in findings if f.severity == severity)
    result = corrected_count(reported, precision, min_labels=CORRECTION_MIN_LABELS)
    if result.reported == 0:
        note = f"no {severity} finding to correct"
    elif result.estimate is None:
        lacking = ", ".join(
            f"{rule} ({precision[rule].labels if rule in precision else 0})"
            for rule in result.missing
        )
        note = (
            f"no estimate: a rule needs {CORRECTION_MIN_LABELS} labels made by hand, and "
            f"{lacking} {'has' if len(result.missing) == 1 else 'have'} fewer"
        )
    else:
        note = (
            f"{result.reported} reported × each rule's precision on {result.labels} labels of "
            "this organization's reviewers"
        )
    return CorrectedCount(
        severity=severity,
        reported=result.reported,
        estimate=None if result.estimate is None else round(result.estimate, 2),
        low=None if result.low is None else round(result.low, 2),
        high=None if result.high is None else round(result.high, 2),
        labels=result.labels,
        note=note,
    )


def corrected_counts(run: Run, findings: Sequence[RunFinding]) -> CorrectedCounts | None:
    """The run's critical and major counts corrected by its organization's labels; None while
    the run is not final (its findings may still change)."""
    if not run.is_final:
        return None
    precision = rule_precision(triage_labels(run.organization_id, lab=bool(run.probe)))
    return CorrectedCounts(
        min_labels=CORRECTION_MIN_LABELS,
        critical=_one("critical", findings, precision),
        major=_one("major", findings, precision),
    )
