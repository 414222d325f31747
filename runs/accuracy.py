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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from judge.agreement import Precision, cohen_kappa, wilson
from qalab.domain import SEVERITIES
from qalab.models import Organization
from runs.models import FindingTriage, MissedFinding, Run, RunFinding, TriageState

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
    """The judge a run had, as a short hash of its snapshot's prompt hashes, semantic-model and
    head hashes, and the semantic layer's thresholds it judged with (an organization's re-fitted
    ones included): two runs with the same judge share it."""
    source = run.source or {}
    payload = {"prompts": source.get("prompts") or {}, "semantic": source.get("semantic") or {}}
    if thresholds := (run.config or {}).get("semantic"):  # absent: as before thresholds counted
        payload["semantic_config"] = thresholds
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return digest[:12]


def _runs(organization: Organization | int, *, lab: bool) -> QuerySet[Run]:
    return (
        Run.objects.filter(organization=organization)
        .of_side(lab=lab)
        .only("id", "engine", "source", "config")
    )


def triage_labels(organization: Organization | int, *, lab: bool = False) -> list[Label]:
    """Every finding of the organization's runs (real bots', or the lab's own with `lab`) that
    a reviewer decided by hand, with its newest such decision; `open` decisions are no label.
    One query, whatever the number of runs (the report reads it for its corrected counts)."""
    rows = (
        FindingTriage.objects.filter(
            run_id__in=_runs(organization, lab=lab).values("id"), carried_from_run__isnull=True
        )
        .select_related("finding", "run")
        .only(
            *(f"finding__{k}" for k in ("id", "case_id", "rule_id", "severity", "fingerprint")),
            "finding__detector",
            "run__id",
            "run__engine",
            "run__source",
            "run__config",
            "state",
            "reviewer_id",
            "created_at",
            "finding_id",
            "run_id",
        )
        .order_by("finding_id", "-created_at", "-id")
    )
    labels: list[Label] = []
    seen: set[int] = set()
    versions: dict[int, str] = {}
    for row in rows.iterator():
        if row.finding_id in seen:
            continue
        seen.add(row.finding_id)
        right = label_of(row.state)
        if right is None:
            continue
        run = row.run
        if run.id not in versions:
            versions[run.id] = judge_version(run)
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
                judge_version=versions[run.id],
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
        .select_related("reviewer", "case")
        .order_by("id")
    )


# --------------------------------------------------------------------------- the accuracy page

# Cohen's kappa of two reviewers is shown once they decided this many fingerprints both.
KAPPA_MIN_PAIRS = 10
# The false positives shown beside a flagged rule.
WORST_EXAMPLES = 5
ENGINE_NAMES = {"offline": "Offline judge", "openai": "LLM judge"}


@dataclass(frozen=True)
class Example:
    """A finding a reviewer marked false positive, to read beside its flagged rule."""

    finding_id: int
    run_id: int
    case_key: str | None
    severity: str
    confidence: float
    subject: str
    quote: str


@dataclass(frozen=True)
class RuleRow:
    rule_id: str
    precision: Precision
    missed: int  # misses reviewers added by hand under this rule
    flagged: bool  # precision below the floor, with enough labels
    examples: tuple[Example, ...] = ()


@dataclass(frozen=True)
class GroupTable:
    """The rule table of the labels of one engine or one judge version."""

    key: str
    name: str
    run_ids: tuple[int, ...]
    labels: int
    rows: tuple[RuleRow, ...]


def is_flagged(precision: Precision, *, floor: float, min_labels: int) -> bool:
    """Below the floor on at least `min_labels` labels (fewer labels: too few to say)."""
    return (
        precision.value is not None and precision.labels >= min_labels and precision.value < floor
    )


def rule_rows(
    labels: Sequence[Label], missed: Sequence[MissedFinding], *, floor: float, min_labels: int
) -> list[RuleRow]:
    """One row per rule with labels or misses added by hand, in rule order."""
    precision = rule_precision(labels)
    misses: dict[str, int] = defaultdict(int)
    for m in missed:
        misses[m.rule_id] += 1
    return [
        RuleRow(
            rule_id=rule,
            precision=precision.get(rule) or wilson(0, 0),
            missed=misses[rule],
            flagged=rule in precision
            and is_flagged(precision[rule], floor=floor, min_labels=min_labels),
        )
        for rule in sorted(set(precision) | set(misses))
    ]


def _case_keys(finding_ids: Iterable[int]) -> dict[int, RunFinding]:
    return {
        f.id: f for f in RunFinding.objects.filter(id__in=list(finding_ids)).select_related("case")
    }


def worst_examples(labels: Sequence[Label], rule_id: str, *, limit: int) -> tuple[Example, ...]:
    """The rule's false positives, worst first: the most severe, then the judge's most confident
    (it was surest and wrong), then the newest."""
    wrong = [label for label in labels if label.rule_id == rule_id and not label.right]
    findings = _case_keys(label.finding_id for label in wrong)
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    examples = []
    for label in wrong:
        f = findings[label.finding_id]
        quote = next((str(e.get("quote", "")) for e in f.evidence if isinstance(e, dict)), "")
        examples.append(
            (
                (rank.get(f.severity, len(rank)), -f.confidence, -f.id),
                Example(
                    finding_id=f.id,
                    run_id=f.run_id,
                    case_key=f.case.key if f.case else None,
                    severity=f.severity,
                    confidence=f.confidence,
                    subject=f.subject,
                    quote=quote,
                ),
            )
        )
    return tuple(example for _, example in sorted(examples, key=lambda e: e[0])[:limit])


def group_tables(
    labels: Sequence[Label],
    missed: Sequence[MissedFinding],
    key_of: Mapping[int, str],
    names: Mapping[str, str],
    *,
    floor: float,
    min_labels: int,
) -> list[GroupTable]:
    """The rule table per group of runs (`key_of`: a run's group), groups in key order."""
    keys = sorted({key_of[label.run_id] for label in labels} | {key_of[m.run_id] for m in missed})
    tables = []
    for key in keys:
        mine = [label for label in labels if key_of[label.run_id] == key]
        misses = [m for m in missed if key_of[m.run_id] == key]
        runs = sorted({label.run_id for label in mine} | {m.run_id for m in misses})
        rows = rule_rows(mine, misses, floor=floor, min_labels=min_labels)
        tables.append(GroupTable(key, names.get(key, key), tuple(runs), len(mine), tuple(rows)))
    return tables


# --------------------------------------------------------------------------- reviewer agreement


@dataclass(frozen=True)
class Decision:
    """One reviewer's newest decision by hand on a fingerprint."""

    reviewer_id: int
    reviewer: str
    state: str
    right: bool
    run_id: int
    finding_id: int
    case_key: str | None
    at: datetime

    @property
    def state_label(self) -> str:
        return str(TriageState(self.state).label)


@dataclass(frozen=True)
class Disagreement:
    fingerprint: str
    rule_id: str
    decisions: tuple[Decision, ...]


@dataclass(frozen=True)
class PairAgreement:
    """Two reviewers on the fingerprints both decided: Cohen's kappa of their right/wrong, or
    None below `min_pairs` shared fingerprints."""

    reviewers: tuple[str, str]
    pairs: int
    agree: int
    kappa: float | None


@dataclass(frozen=True)
class Agreement:
    disagreements: tuple[Disagreement, ...]
    pairs: tuple[PairAgreement, ...]
    min_pairs: int


def reviewer_agreement(
    organization: Organization, *, lab: bool = False, min_pairs: int = KAPPA_MIN_PAIRS
) -> Agreement:
    """Where reviewers decided the same fingerprint by hand: each reviewer's newest right/wrong
    decision on it (`open` is none). A disagreement is a fingerprint one reviewer called right
    and another wrong; kappa is per pair of reviewers, over the fingerprints both decided."""
    runs = [run.id for run in _runs(organization, lab=lab)]
    rows = (
        FindingTriage.objects.filter(
            run_id__in=runs, carried_from_run__isnull=True, reviewer__isnull=False
        )
        .select_related("finding__case", "reviewer")
        .order_by("-created_at", "-id")
    )
    newest: dict[str, dict[int, Decision]] = defaultdict(dict)
    rule_of: dict[str, str] = {}
    seen: set[tuple[str, int]] = set()  # (fingerprint, reviewer): their newest row was read
    for row in rows.iterator():
        f = row.finding
        assert row.reviewer_id is not None and row.reviewer is not None
        if (f.fingerprint, row.reviewer_id) in seen:
            continue
        seen.add((f.fingerprint, row.reviewer_id))
        right = label_of(row.state)
        if right is None:  # re-opened: the reviewer has no decision on it now
            continue
        rule_of.setdefault(f.fingerprint, f.rule_id)
        newest[f.fingerprint][row.reviewer_id] = Decision(
            reviewer_id=row.reviewer_id,
            reviewer=row.reviewer.get_username(),
            state=row.state,
            right=right,
            run_id=row.run_id,
            finding_id=f.id,
            case_key=f.case.key if f.case else None,
            at=row.created_at,
        )
    disagreements = []
    shared: dict[tuple[int, int], list[tuple[bool, bool]]] = defaultdict(list)
    names: dict[int, str] = {}
    for fingerprint, by_reviewer in sorted(newest.items()):
        decisions = sorted(by_reviewer.values(), key=lambda d: (d.reviewer_id, d.at))
        if len({d.right for d in decisions}) > 1:
            disagreements.append(Disagreement(fingerprint, rule_of[fingerprint], tuple(decisions)))
        for i, a in enumerate(decisions):
            names[a.reviewer_id] = a.reviewer
            for b in decisions[i + 1 :]:
                shared[(a.reviewer_id, b.reviewer_id)].append((a.right, b.right))
    pairs = tuple(
        PairAgreement(
            reviewers=(names[a], names[b]),
            pairs=len(items),
            agree=sum(x == y for x, y in items),
            kappa=cohen_kappa(items) if len(items) >= min_pairs else None,
        )
        for (a, b), items in sorted(shared.items())
    )
    return Agreement(tuple(disagreements), pairs, min_pairs)
