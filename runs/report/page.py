"""What the report page shows beyond the `RunReport` itself: findings grouped by fingerprint
(one entry per issue, triaged together) and the groups each top action resolves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from runs.models import TriageState
from runs.report.schema import Finding, TopAction, Triage


@dataclass(eq=False)
class FindingGroup:
    """Findings with the same severity and fingerprint; `finding` is the first of `items`."""

    severity: str
    finding: Finding
    items: list[Finding] = field(default_factory=list)
    ids: str = ""
    cases: list[str] = field(default_factory=list)
    state: str = ""
    state_label: str = ""
    notes: list[Triage] = field(default_factory=list)


def finding_groups(findings: Sequence[Finding]) -> list[FindingGroup]:
    """Findings with the same severity and fingerprint (rule + subject: the same invented price
    in every reply, the same wrong hours in ten cases) as one group, in the report's order.

    Each group shows its first finding's evidence and fix, lists every occurrence (case, turn)
    and triages all its findings at once; its state is the common state or "mixed".
    """
    labels = dict(TriageState.choices)
    groups: dict[tuple[str, str], FindingGroup] = {}
    for f in findings:
        key = (f.severity, f.fingerprint)
        group = groups.get(key)
        if group is None:
            group = groups[key] = FindingGroup(severity=f.severity, finding=f)
        group.items.append(f)
    for group in groups.values():
        items = group.items
        states = Counter(f.triage.state for f in items)
        group.ids = ",".join(str(f.id) for f in items)
        group.cases = sorted({f.case for f in items if f.case})
        if len(states) == 1:
            state = next(iter(states))
            group.state, group.state_label = state, labels.get(state, state)
        else:
            group.state = "mixed"
            group.state_label = "mixed: " + ", ".join(
                f"{n} {labels.get(state, state).lower()}" for state, n in states.most_common()
            )
        group.notes = [f.triage for f in items if f.triage.note][:3]
    return list(groups.values())


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
