"""One issue, one entry: the run's findings grouped by fingerprint, in one place.

The report build stores the groups in the report (`RunReport.finding_groups`); the report page,
the Markdown and the JUnit all list them, so all three show the same issues with the same counts
("48 critical findings (4 distinct)" is four entries everywhere). A group holds every finding of
one fingerprint (the same invented price in twelve cases, one question repeated in several),
whatever their severities: its severity is the most severe one's, its count the total.
"""

from __future__ import annotations

from collections.abc import Sequence

from qalab.domain import SEVERITIES
from runs.report.schema import Finding, FindingGroup, RunReport


def group_findings(findings: Sequence[Finding]) -> list[FindingGroup]:
    """The findings grouped by fingerprint, most severe group first, then in the order of
    their first finding; within a group, its most severe finding first, then report order."""
    by_fingerprint: dict[str, list[Finding]] = {}
    for finding in findings:
        by_fingerprint.setdefault(finding.fingerprint, []).append(finding)
    groups: list[FindingGroup] = []
    for fingerprint, items in by_fingerprint.items():
        ordered = sorted(items, key=lambda f: SEVERITIES.index(f.severity))  # stable
        first = ordered[0]
        groups.append(
            FindingGroup(
                fingerprint=fingerprint,
                rule_id=first.rule_id,
                severity=first.severity,
                subject=first.subject,
                count=len(ordered),
                cases=sorted({f.case for f in ordered if f.case}),
                finding_ids=[f.id for f in ordered],
            )
        )
    return sorted(groups, key=lambda g: SEVERITIES.index(g.severity))


def report_groups(report: RunReport) -> list[tuple[FindingGroup, list[Finding]]]:
    """Each group of the report with its findings (the shown one first). A report whose
    findings were edited after it was built (its stored groups no longer name each of them
    once) is grouped again, by the same rule."""
    by_id = {f.id: f for f in report.findings}
    groups = report.finding_groups
    named = [i for g in groups for i in g.finding_ids]
    if len(by_id) != len(report.findings) or sorted(named) != sorted(by_id):
        # Ids edited or repeated: group the findings themselves, matched by position.
        regrouped = group_findings(report.findings)
        pool = {id(f): f for f in report.findings}
        out: list[tuple[FindingGroup, list[Finding]]] = []
        taken: set[int] = set()
        for group in regrouped:
            items = [
                f
                for f in pool.values()
                if f.fingerprint == group.fingerprint and id(f) not in taken
            ]
            items.sort(key=lambda f: SEVERITIES.index(f.severity))
            taken.update(id(f) for f in items)
            out.append((group, items))
        return out
    return [(g, [by_id[i] for i in g.finding_ids]) for g in groups]


def group_of(report: RunReport) -> dict[str, FindingGroup]:
    """The group of each fingerprint."""
    return {group.fingerprint: group for group, _ in report_groups(report)}
