"""An organization's triage labels as labelled dialogues (`qalab_calibrate --from-triage ORG
--out FILE.jsonl`), so a judge change can be measured on the team's own labels with
`qalab_calibrate --natural` (issue 36, point 5).

One line per case with a labelled finding or a miss added by hand, in `qalab_judge`'s dialogue
format: `id`, `kb` (the case's fixture documents), `turns` (customer and bot messages as the
run played them, each bot message with the `extracted` values and `status` it returned),
`blueprint` (the scenario the case played: persona facts, expected status, reference date),
plus `"label_unit": "finding"` and the findings by rule, turn (the index of the bot message)
and subject (`judge.natural`):

- `labels`: the findings labelled right (confirmed, fixed, won't fix), and the misses added by
  hand (no subject: the judge found nothing to name);
- `rejected`: the findings labelled wrong (false positive);
- `unlabelled`: the case's findings nobody decided by hand (open, or only a carried copy):
  the scorer leaves them out, as the accuracy page does;
- `manifest`: the org's ground truth the run was judged against (its manifest artifact), so
  the org checks run when the line is judged again; `source`: org, run, case, engine.

The export is only as good as re-judging: with the blueprint, the extracted values and the
statuses the scenario checks (`final_status`, `extraction_accuracy`) run on a line as they ran
on the case, but a run judged with other settings, another judge version or the LLM judge may
have findings a re-judge does not give.
`round_trip` re-judges every exported line as `--natural` does and says, per labelled rule,
whether it gives exactly the run's findings (then `--natural` reproduces the page's precision
for that rule) and, when not, why.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from generator.schemas import Fixture
from judge.agreement import Precision
from judge.dialogues import Dialogue, judge_dialogue
from judge.natural import LabelledDialogue
from qalab.models import Organization
from runs.accuracy import Label, missed_by_hand, rule_precision, triage_labels
from runs.artifacts import load_blueprint, load_fixture, load_manifest
from runs.models import MissedFinding, RunCase, RunFinding
from runs.services.case_judging import file_judge_config
from runs.services.simulate import turn_from_row

Key = tuple[str, int, str]  # rule, bot message index, subject


@dataclass
class RuleTrip:
    """One labelled rule's round trip: the run's findings in the exported cases against the
    ones re-judging the exported lines gives."""

    labels: int = 0  # findings of the rule labelled by hand (the page's count)
    exported: int = 0  # of them, written to the export
    stored: int = 0  # the rule's findings in the exported cases (labelled or not)
    rejudged: int = 0
    missing: int = 0  # the run had them, re-judging does not
    extra: int = 0  # re-judging gives them, the run did not
    # findings sharing rule, turn and subject with one decided otherwise (a dialogue cannot
    # tell them apart)
    collisions: int = 0

    @property
    def holds(self) -> bool:
        return self.labels == self.exported and not (self.missing or self.extra or self.collisions)

    def why(self, rule: str) -> str:
        if self.holds:
            return "re-judging the exported dialogues gives exactly the run's findings"
        reasons = []
        if self.labels > self.exported:
            reasons.append(
                f"{self.labels - self.exported} labelled finding(s) have no turn or case to export"
            )
        if self.collisions:
            reasons.append(
                f"{self.collisions} finding(s) share rule, turn and subject with one decided "
                "otherwise"
            )
        if self.missing or self.extra:
            reasons.append(
                f"re-judging gives {self.rejudged} finding(s) where the runs had {self.stored} "
                f"({self.missing} missing, {self.extra} other): judged with other settings, "
                "another judge version or the LLM judge"
            )
        return "; ".join(reasons)


@dataclass
class TriageExport:
    lines: list[dict[str, Any]]
    precision: dict[str, Precision]
    misses: dict[str, int]
    labels: int
    round_trip: dict[str, RuleTrip] = field(default_factory=dict)

    def holding(self) -> list[str]:
        """The labelled rules whose page precision `--natural` on the export reproduces."""
        return [rule for rule, trip in self.round_trip.items() if trip.holds]


def _entry(finding: RunFinding, turn: int, note: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"rule": finding.rule_id, "turn": turn, "subject": finding.subject}
    if note:
        entry["note"] = note
    return entry


class _Cases:
    """Per run, its fixtures, blueprints and manifest, read once."""

    def __init__(self) -> None:
        self.fixtures: dict[tuple[int, str], Fixture] = {}
        self.blueprints: dict[tuple[int, str], dict[str, Any]] = {}
        self.manifests: dict[int, dict[str, Any]] = {}

    def fixture(self, run_id: int, key: str) -> Fixture:
        if (run_id, key) not in self.fixtures:
            self.fixtures[run_id, key] = load_fixture(run_id, key)
        return self.fixtures[run_id, key]

    def blueprint(self, run_id: int, scenario_key: str) -> dict[str, Any]:
        """The scenario's blueprint artifact (trials of a scenario share it)."""
        if (run_id, scenario_key) not in self.blueprints:
            blueprint = load_blueprint(run_id, scenario_key)
            self.blueprints[run_id, scenario_key] = blueprint.model_dump(mode="json")
        return self.blueprints[run_id, scenario_key]

    def manifest(self, run_id: int) -> dict[str, Any]:
        if run_id not in self.manifests:
            self.manifests[run_id] = load_manifest(run_id).model_dump(mode="json")
        return self.manifests[run_id]


def _line(
    case: RunCase,
    labels: dict[int, Label],
    misses: list[MissedFinding],
    cases: _Cases,
    trips: dict[str, RuleTrip],
) -> tuple[dict[str, Any], Counter[Key]]:
    """The case as a labelled line, and the multiset of its findings that a dialogue can name
    (rule, bot message, subject)."""
    turns: list[dict[str, Any]] = []
    bot_message: dict[int, int] = {}
    for row in case.turns.order_by("index"):
        turn = turn_from_row(row)  # as the run's judge read it
        turns.append({"role": "customer", "text": turn.customer})
        bot_message[turn.index] = len(turns)
        bot: dict[str, Any] = {"role": "bot", "text": turn.reply, "extracted": turn.extracted}
        if turn.status is not None:
            bot["status"] = turn.status
        turns.append(bot)
    fixture = cases.fixture(case.run_id, case.fixture_key)
    line: dict[str, Any] = {
        "id": f"run-{case.run_id}-{case.key}",
        "kb": [{"id": d.id, "title": d.title, "text": d.text} for d in fixture.documents],
        "turns": turns,
        "blueprint": cases.blueprint(case.run_id, case.scenario_key),
        "label_unit": "finding",
        "labels": [],
        "rejected": [],
        "unlabelled": [],
        "manifest": cases.manifest(case.run_id),
        "source": {"run": case.run_id, "case": case.key, "engine": case.run.engine},
    }
    stored: Counter[Key] = Counter()
    decisions: dict[Key, set[str]] = defaultdict(set)
    for finding in case.findings.order_by("position"):
        turn = bot_message.get(finding.turn_index) if finding.turn_index is not None else None
        if turn is None:
            continue
        key = (finding.rule_id, turn, finding.subject[:300])
        stored[key] += 1
        label = labels.get(finding.id)
        decisions[key].add("open" if label is None else str(label.right))
        if len(decisions[key]) > 1:
            trips[finding.rule_id].collisions += 1
        if label is None:
            line["unlabelled"].append(_entry(finding, turn))
            continue
        trips[finding.rule_id].exported += 1
        line["labels" if label.right else "rejected"].append(_entry(finding, turn, label.state))
    for miss in misses:
        if (turn := bot_message.get(miss.turn_index)) is not None:
            note = miss.note or miss.other_text
            line["labels"].append(
                {"rule": miss.rule_id, "turn": turn, "missed": True, "note": note}
            )
    return line, stored


def _rejudged(line: dict[str, Any]) -> Counter[Key]:
    """The findings re-judging the line gives, as `qalab_calibrate --natural` judges it."""
    dialogue = LabelledDialogue.model_validate(line)
    judged = judge_dialogue(
        Dialogue.model_validate(line), dialogue.manifest, config=file_judge_config()
    )
    return Counter((f.rule, f.turn, f.subject[:300]) for f in judged.findings if f.turn is not None)


def triage_export(
    organization: Organization, *, lab: bool = False, verify: bool = True
) -> TriageExport:
    """The organization's labels as labelled lines, the page's precision per rule, the misses
    per rule and, with `verify`, each labelled rule's round trip."""
    labels = triage_labels(organization, lab=lab)
    misses = missed_by_hand(organization, lab=lab)
    by_finding = {label.finding_id: label for label in labels}
    misses_of: dict[int, list[MissedFinding]] = defaultdict(list)
    for miss in misses:
        misses_of[miss.case_id].append(miss)
    trips: dict[str, RuleTrip] = defaultdict(RuleTrip)
    for label in labels:
        trips[label.rule_id].labels += 1
    case_ids = {label.case_id for label in labels if label.case_id is not None} | set(misses_of)
    rows = (
        RunCase.objects.filter(id__in=case_ids)
        .select_related("run")
        .order_by("run_id", "scenario_key", "trial")
    )
    cases = _Cases()
    lines: list[dict[str, Any]] = []
    for case in rows:
        line, stored = _line(case, by_finding, misses_of[case.id], cases, trips)
        lines.append(line)
        if not verify:
            continue
        rejudged = _rejudged(line)
        for rule in {k[0] for k in stored} | {k[0] for k in rejudged}:
            if rule not in trips:
                continue  # a rule nobody labelled: no figure to reproduce
            mine = Counter({k: n for k, n in stored.items() if k[0] == rule})
            again = Counter({k: n for k, n in rejudged.items() if k[0] == rule})
            trip = trips[rule]
            trip.stored += mine.total()
            trip.rejudged += again.total()
            trip.missing += (mine - again).total()
            trip.extra += (again - mine).total()
    return TriageExport(
        lines=lines,
        precision=rule_precision(labels),
        misses=dict(sorted(Counter(m.rule_id for m in misses).items())),
        labels=len(labels),
        round_trip=dict(sorted(trips.items())) if verify else {},
    )


def _figure(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def export_figures(export: TriageExport) -> dict[str, Any]:
    """The JSON of `qalab_calibrate --from-triage`: per rule the page's precision (Wilson 95%
    interval, label counts) and the misses added by hand, and each labelled rule's round trip."""
    rules = sorted(set(export.precision) | set(export.misses))
    figures: dict[str, Any] = {}
    for rule in rules:
        p = export.precision.get(rule)
        trip = export.round_trip.get(rule)
        figures[rule] = {
            "labels": p.labels if p else 0,
            "right": p.right if p else 0,
            "wrong": (p.labels - p.right) if p else 0,
            "precision": _figure(p.value) if p else None,
            "interval": [_figure(p.low), _figure(p.high)] if p and p.value is not None else None,
            "misses": export.misses.get(rule, 0),
            "round_trip": None
            if trip is None
            else {
                "holds": trip.holds,
                "why": trip.why(rule),
                "exported": trip.exported,
                "stored": trip.stored,
                "rejudged": trip.rejudged,
                "missing": trip.missing,
                "extra": trip.extra,
                "collisions": trip.collisions,
            },
        }
    return {
        "labels": export.labels,
        "misses": sum(export.misses.values()),
        "dialogues": len(export.lines),
        "rules": figures,
        "round_trip_rules": export.holding(),
    }


def format_export(figures: dict[str, Any]) -> str:
    """The figures as a table, then which rules round-trip and why the others do not."""

    def show(value: float | None) -> str:
        return "  -  " if value is None else f"{value:.2f}"

    lines = [
        f"{figures['labels']} finding(s) labelled by hand, {figures['misses']} miss(es) added by "
        f"hand, {figures['dialogues']} dialogue(s)",
        f"{'rule':<24} {'labels':>6} {'right':>5} {'precision':>9} {'95% interval':>13} "
        f"{'misses':>6}  round trip",
    ]
    for rule, row in figures["rules"].items():
        low_high = row["interval"] or [None, None]
        trip = row["round_trip"]
        lines.append(
            f"{rule:<24} {row['labels']:>6} {row['right']:>5} {show(row['precision']):>9} "
            f"{show(low_high[0]):>6}-{show(low_high[1]):<6} {row['misses']:>6}  "
            + ("-" if trip is None else "yes" if trip["holds"] else "no")
        )
    holding = figures["round_trip_rules"]
    lines.append(
        "qalab_calibrate --natural on the export reproduces the precision above of: "
        + (", ".join(holding) or "no rule")
    )
    for rule, row in figures["rules"].items():
        trip = row["round_trip"]
        if trip is not None and not trip["holds"]:
            lines.append(f"  not of {rule}: {trip['why']}")
    return "\n".join(lines)
