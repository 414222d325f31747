"""The judge measured against the organization's own reviewers (issue 36): every triage decision
made by hand is a label on a finding.

- confirmed / fixed: the finding was right; won't fix: right, but accepted; false positive:
  wrong. `open` is no label.
- Only decisions made by hand count: a carried copy (`carried_from_run`) repeats a label, it is
  not a new one. A finding's label is its newest decision made by hand, whoever made it.
- The lab's own runs (selftest, canary, stand-in) are kept apart from real bots' (`lab=True`).
- Misses added by hand (`MissedFinding` without `carried_from`) are counted per rule apart.

The figures (per rule precision with its Wilson interval: `judge.agreement`) are computed from
these labels by `rule_precision`; the accuracy page, the report's corrected counts and the
export (`qalab_calibrate --from-triage`) all read them here.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from judge.agreement import Precision, wilson
from qalab.models import Organization
from runs.models import FindingTriage, MissedFinding, Run, TriageState

# What each state says of the finding it is on (None: no label).
RIGHT_STATES = (TriageState.CONFIRMED, TriageState.FIXED, TriageState.WONT_FIX)
WRONG_STATES = (TriageState.FALSE_POSITIVE,)


def label_of(state: str) -> bool | None:
    """True when the state says the finding was right, False when wrong, None for `open`."""
    if state in RIGHT_STATES:
        return True
    if state in WRONG_STATES:
        return False
    return None


@dataclass(frozen=True)
class Label:
    """One finding as a reviewer labelled it (its newest decision made by hand)."""

    finding_id: int
    run_id: int
    case_id: int | None
    rule_id: str
    severity: str
    fingerprint: str
    detector: str
    state: str
    right: bool
    reviewer_id: int | None
    at: datetime
    engine: str  # the run's engine: "offline", or "openai" (the LLM judge reviewed it)
    judge_version: str  # a short hash of the run's prompts and semantic files (run snapshot)


def judge_version(run: Run) -> str:
    """The judge a run had, as a short hash of its snapshot's prompt hashes and semantic-model
    and head hashes: two runs with the same judge share it."""
    source = run.source or {}
    payload = {"prompts": source.get("prompts") or {}, "semantic": source.get("semantic") or {}}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return digest[:12]


def _runs(organization: Organization, *, lab: bool) -> Iterable[Run]:
    runs = Run.objects.filter(organization=organization)
    return (runs.of_the_lab() if lab else runs.of_real_bots()).only("id", "engine", "source")


def triage_labels(organization: Organization, *, lab: bool = False) -> list[Label]:
    """Every finding of the organization's runs (real bots', or the lab's own with `lab`) that
    a reviewer decided by hand, with its newest such decision; `open` decisions are no label."""
    runs = {run.id: run for run in _runs(organization, lab=lab)}
    rows = (
        FindingTriage.objects.filter(run_id__in=list(runs), carried_from_run__isnull=True)
        .select_related("finding")
        .order_by("finding_id", "-created_at", "-id")
    )
    labels: list[Label] = []
    seen: set[int] = set()
    for row in rows.iterator():
        if row.finding_id in seen:
            continue
        seen.add(row.finding_id)
        right = label_of(row.state)
        if right is None:
            continue
        run = runs[row.run_id]
        f = row.finding
        labels.append(
            Label(
                finding_id=f.id,
                run_id=row.run_id,
                case_id=f.case_id,
                rule_id=f.rule_id,
                severity=f.severity,
                fingerprint=f.fingerprint,
                detector=f.detector,
                state=row.state,
                right=right,
                reviewer_id=row.reviewer_id,
                at=row.created_at,
                engine=run.engine,
                judge_version=judge_version(run),
            )
        )
    return labels


def rule_precision(labels: Sequence[Label]) -> dict[str, Precision]:
    """Each rule's precision over `labels`, with its Wilson 95% interval and label count."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for label in labels:
        counts[label.rule_id][0] += label.right
        counts[label.rule_id][1] += 1
    return {rule: wilson(right, n) for rule, (right, n) in sorted(counts.items())}


def missed_by_hand(organization: Organization, *, lab: bool = False) -> list[MissedFinding]:
    """The misses reviewers added by hand on the organization's runs (carried copies left out)."""
    runs = [run.id for run in _runs(organization, lab=lab)]
    return list(
        MissedFinding.objects.filter(run_id__in=runs, carried_from_run__isnull=True)
        .select_related("reviewer")
        .order_by("id")
    )
