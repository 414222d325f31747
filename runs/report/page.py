"""What the report page shows beyond the `RunReport` itself: its finding groups (one entry per
issue, triaged together) with their triage state, and the groups each top action resolves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from runs.models import TriageState
from runs.report.groups import report_groups
from runs.report.schema import Finding, RunReport, TopAction, Triage
from runs.report.trials import flaky_text


@dataclass(eq=False)
class FindingGroup:
    """One entry of the page: a group of the report (`RunReport.finding_groups`, one
    fingerprint), its findings (`finding`, the first of `items`, is the one shown) and their
    triage state."""

    severity: str
    finding: Finding
    items: list[Finding] = field(default_factory=list)
    ids: str = ""
    cases: list[str] = field(default_factory=list)
    state: str = ""
    state_label: str = ""
    notes: list[Triage] = field(default_factory=list)
    flaky: str = ""  # "flaky: found in 1 of 3 trials" (runs.report.trials.flaky_text)


def finding_groups(report: RunReport) -> list[FindingGroup]:
    """The report's finding groups (`runs.report.groups`: the same invented price in every
    reply, the same question repeated in several cases, whatever their severities), in the
    report's order, as the page shows them.

    Each group shows its first finding's evidence and fix, lists every occurrence (case, turn)
    and triages all its findings at once; its state is the common state or "mixed".
    """
    labels = dict(TriageState.choices)
    out: list[FindingGroup] = []
    for group, items in report_groups(report):
        entry = FindingGroup(severity=group.severity, finding=items[0], items=items)
        states = Counter(f.triage.state for f in items)
        entry.ids = ",".join(str(f.id) for f in items)
        entry.cases = group.cases
        entry.flaky = flaky_text(group)
        if len(states) == 1:
            state = next(iter(states))
            entry.state, entry.state_label = state, labels.get(state, state)
        else:
            entry.state = "mixed"
            entry.state_label = "mixed: " + ", ".join(
                f"{n} {labels.get(state, state).lower()}" for state, n in states.most_common()
            )
        entry.notes = distinct_notes(items)
        out.append(entry)
    return out


def distinct_notes(items: Sequence[Finding], limit: int = 3) -> list[Triage]:
    """The group's notes, each (reviewer, note) once: a bulk triage gives every finding of the
    group the same note, which the page shows once, not once per occurrence."""
    seen: set[tuple[str, str]] = set()
    out: list[Triage] = []
    for f in items:
        key = (f.triage.reviewer or "", f.triage.note)
        if f.triage.note and key not in seen:
            seen.add(key)
            out.append(f.triage)
    return out[:limit]


def actions_with_groups(
    actions: Sequence[TopAction], groups: Sequence[FindingGroup]
) -> list[tuple[TopAction, list[FindingGroup]]]:
    """Each top action with the finding groups it resolves (anchors on the report)."""
    group_of = {f.id: g for g in groups for f in g.items}
    out = []
    for action in actions:
        linked: list[FindingGroup] = []
        for finding_id in action.finding_ids:
            group = group_of.get(finding_id)
            if group is not None and group not in linked:
                linked.append(group)
        out.append((action, linked))
    return out
