"""`manage.py qalab_calibrate [--task TASK] --data FILE [--json PATH] [--examples [DIR]]`.

`--task groundedness` (the default) measures the groundedness scorer
(`judge.support.support_score`) on human-labelled data: one JSON object per line,
`{"knowledge", "history", "response", "label"}` with label `grounded` or `ungrounded`.
`ungrounded` is the positive class and `1 - support_score` its score. Prints N, AUROC, and
balanced accuracy, precision, recall and F1 at `UNGROUNDED_THRESHOLD`, next to the word-overlap
baseline's AUROC; `--json` writes the same. `scripts/begin_to_jsonl.py` converts the BEGIN dev
files.

`--task self_contradiction` measures the dialogue contradiction scorer
(`judge.contradiction.contradiction_score`) on DECODE-format records - a JSON array (like
/work/shared/data/decode_dev.json) or one record per line - each `{"turns": [{"agent_id",
"text"}, ...], "last_utterance": {"agent_id", "text"}, "label": "contradiction" |
"no_contradiction"}` (or a boolean `is_contradiction`). `contradiction` is the positive class.
Prints N, AUROC, and balanced accuracy, precision, recall and F1 at `DECISION_THRESHOLD`;
`--json` writes the same.

`--natural DIR` judges every labelled dialogue file `DIR/*.jsonl` (the `qalab_judge` format
plus `"labels": [{"rule", "turn"}]`, written by people reading the transcripts) and prints
precision, recall and F1 per rule, per file and over all files (`judge.natural`).

`--claims DIR` judges every claim-labelled dialogue file `DIR/*.jsonl` (the `qalab_judge`
format plus `"claims": [{"turn", "quote"}]`: the bot sentences a reader found unsupported by the
KB) and prints, for `ungrounded_sentence`, `unsupported_facts` and either of them, precision
(findings overlapping a marked quote) and recall (marked quotes a finding overlaps).

`--from-triage ORG [--lab] [--out FILE.jsonl]` measures the judge on the organization's own
reviewers (`runs.accuracy`, issue 36): per rule the precision of its findings as triaged by
hand (Wilson 95% interval, label counts: the accuracy page's figures) and the misses added by
hand; `--out` writes the labelled cases as dialogues for `--natural` (`runs.triage_export`:
with each case's blueprint and the bot's extracted values and statuses, so the scenario checks
run again too), and the output says for which rules `--natural` on that file reproduces the
precision (the others' findings are not given back by re-judging: their runs were judged with
other settings, another judge version or the LLM judge, or have no turn to export).
`--lab`: the lab's own runs (selftest, canary, stand-in) instead of the real bots'.

`--examples [DIR]` also runs the labelled check examples (`judge.examples.run_examples`) and
fails when any is wrong.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judge.contradiction import DecodeRecord, decode_record, evaluate
from judge.contradiction.decode import dev_part
from judge.metrics import auroc, confusion
from judge.support import UNGROUNDED_THRESHOLD, baseline_support, support_score
from runs.services.case_judging import file_judge_config

LABELS = {"grounded": False, "ungrounded": True}
_FIELDS = ("knowledge", "history", "response", "label")
TASKS = ("groundedness", "self_contradiction")


@dataclass(frozen=True)
class Record:
    knowledge: str
    history: str
    response: str
    ungrounded: bool


def read_records(path: Path) -> list[Record]:
    """The labelled records of a JSONL file; CommandError naming the line of a bad one."""
    if not path.is_file():
        raise CommandError(f"{path}: no such file")
    records: list[Record] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CommandError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(item, dict):
                raise CommandError(f"{path}:{number}: expected a JSON object")
            missing = [f for f in _FIELDS if f not in item and f != "history"]
            if missing:
                raise CommandError(f"{path}:{number}: missing {', '.join(missing)}")
            texts = {f: item.get(f) or "" for f in ("knowledge", "history", "response")}
            if not all(isinstance(v, str) for v in texts.values()):
                raise CommandError(f"{path}:{number}: knowledge, history, response must be text")
            label = item["label"]
            if label not in LABELS:
                raise CommandError(
                    f"{path}:{number}: unknown label {label!r} (expected grounded or ungrounded)"
                )
            records.append(Record(**texts, ungrounded=LABELS[label]))
    if not records:
        raise CommandError(f"{path}: no records")
    return records


def calibrate(records: list[Record], threshold: float = UNGROUNDED_THRESHOLD) -> dict[str, Any]:
    """The figures of `qalab_calibrate` for `records` (ungrounded = positive class)."""
    started = time.perf_counter()
    support = [support_score(r.knowledge, r.response, r.history) for r in records]
    seconds = time.perf_counter() - started
    labels = [r.ungrounded for r in records]
    positives = sum(labels)
    both = 0 < positives < len(labels)
    counts = confusion([s < threshold for s in support], labels)
    baseline = [baseline_support(r.knowledge, r.response) for r in records]
    return {
        "n": len(records),
        "ungrounded": positives,
        "grounded": len(records) - positives,
        "threshold": threshold,
        "auroc": round(auroc([1 - s for s in support], labels), 4) if both else None,
        "balanced_accuracy": round(counts.balanced_accuracy, 4),
        "precision": round(counts.precision, 4),
        "recall": round(counts.recall, 4),
        "f1": round(counts.f1, 4),
        "confusion": {"tp": counts.tp, "fp": counts.fp, "tn": counts.tn, "fn": counts.fn},
        "baseline_auroc": round(auroc([1 - b for b in baseline], labels), 4) if both else None,
        "seconds": round(seconds, 3),
    }


def read_decode(path: Path) -> list[DecodeRecord]:
    """The DECODE-format records of a JSON array or JSONL file; CommandError naming the record
    (array) or line (JSONL) of a bad one."""
    if not path.is_file():
        raise CommandError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text ({exc.reason})") from None
    items: list[tuple[str, object]] = []
    if text.lstrip().startswith("["):
        try:
            array = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        items = [(f"{path}: record {n}", item) for n, item in enumerate(array, start=1)]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((f"{path}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CommandError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    records: list[DecodeRecord] = []
    for where, item in items:
        try:
            records.append(decode_record(item))
        except ValueError as exc:
            raise CommandError(f"{where}: {exc}") from None
    if not records:
        raise CommandError(f"{path}: no records")
    return records


def calibrate_contradiction(records: list[DecodeRecord], *, semantic: bool) -> dict[str, Any]:
    """The figures of `qalab_calibrate --task self_contradiction` for `records` (contradiction =
    positive class), with the scoring time. With the semantic layer (the default judge) the
    score is the contradiction head's, utterance against each earlier utterance of the speaker,
    at the head's threshold (picked on DECODE dev part A); without it, the lexical scorer's."""
    started = time.perf_counter()
    if semantic:
        from judge.semantic.heads import load_head
        from judge.semantic.scores import utterance_contradiction

        figures = evaluate(
            records,
            threshold=load_head("contradiction").threshold,
            score=lambda r: utterance_contradiction(r.earlier, r.utterance),
        )
        figures["scorer"] = "semantic: contradiction head"
    else:
        figures = {**evaluate(records), "scorer": "lexical (judge.contradiction)"}
    return {**figures, "seconds": round(time.perf_counter() - started, 3)}


def format_contradiction_figures(figures: dict[str, Any]) -> str:
    """The self-contradiction figures as aligned text lines."""
    auc = figures["auroc"]
    c = figures["confusion"]
    negatives = figures["n"] - figures["contradictions"]
    rows = [
        ("scorer", str(figures.get("scorer", "lexical"))),
        (
            "N",
            f"{figures['n']} ({figures['contradictions']} contradiction, "
            f"{negatives} no_contradiction)",
        ),
        ("AUROC (contradiction)", "n/a (needs both labels)" if auc is None else f"{auc:.4f}"),
        ("threshold (score >=)", f"{figures['threshold']}"),
        ("balanced accuracy", f"{figures['balanced_accuracy']:.4f}"),
        ("precision (contradiction)", f"{figures['precision']:.4f}"),
        ("recall (contradiction)", f"{figures['recall']:.4f}"),
        ("F1 (contradiction)", f"{figures['f1']:.4f}"),
        ("confusion", f"tp={c['tp']} fp={c['fp']} tn={c['tn']} fn={c['fn']}"),
        ("scoring time", f"{figures['seconds']:.2f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def natural_figures(folder: Path, *, claims: bool = False) -> dict[str, Any]:
    """Per file (and "all"), per evaluated rule: labels, findings, precision, recall, F1; with
    `claims`, of the unsupported-claim rules against claim-labelled files."""
    from judge.natural import LabelError, score_claim_files, score_files

    paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not paths:
        raise CommandError(f"{folder}: no labelled *.jsonl files", returncode=2)
    try:
        config = file_judge_config()
        scores = score_claim_files(paths, config) if claims else score_files(paths, config)
    except LabelError as exc:
        raise CommandError(str(exc), returncode=2) from None

    def figure(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        name: {
            rule: {
                "labels": s.labels,
                "found": s.found,
                "findings": s.findings,
                "correct": s.correct,
                "precision": figure(s.precision),
                "recall": figure(s.recall),
                "f1": figure(s.f1),
                "misses": s.misses,
                "false_alarms": s.false_alarms,
            }
            for rule, s in rules.items()
        }
        for name, rules in scores.items()
    }


def format_natural(figures: dict[str, Any]) -> str:
    """One table per file, "all" last: rule, labels, findings, precision, recall, F1."""

    def show(value: float | None) -> str:
        return "  -  " if value is None else f"{value:.2f}"

    lines: list[str] = []
    for name in [*(n for n in figures if n != "all"), "all"]:
        lines += [
            f"== {name}",
            f"{'rule':<22} {'labels':>6} {'findings':>8} {'precision':>9} {'recall':>6} {'F1':>5}",
        ]
        for rule, row in figures[name].items():
            lines.append(
                f"{rule:<22} {row['labels']:>6} {row['findings']:>8} "
                f"{show(row['precision']):>9} {show(row['recall']):>6} {show(row['f1']):>5}"
            )
    return "\n".join(lines)


def format_figures(figures: dict[str, Any]) -> str:
    """The figures as aligned text lines."""

    def show(value: float | None) -> str:
        return "n/a (needs both labels)" if value is None else f"{value:.4f}"

    c = figures["confusion"]
    rows = [
        (
            "N",
            f"{figures['n']} ({figures['ungrounded']} ungrounded, {figures['grounded']} grounded)",
        ),
        ("AUROC (ungrounded)", show(figures["auroc"])),
        ("baseline AUROC (word overlap)", show(figures["baseline_auroc"])),
        ("threshold (support <)", f"{figures['threshold']}"),
        ("balanced accuracy", show(figures["balanced_accuracy"])),
        ("precision (ungrounded)", show(figures["precision"])),
        ("recall (ungrounded)", show(figures["recall"])),
        ("F1 (ungrounded)", show(figures["f1"])),
        ("confusion", f"tp={c['tp']} fp={c['fp']} tn={c['tn']} fn={c['fn']}"),
        ("scoring time", f"{figures['seconds']:.2f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


class Command(BaseCommand):
    help = (
        "Measure the groundedness scorer on a labelled JSONL file (AUROC, balanced accuracy, "
        "precision/recall/F1 for 'ungrounded'), or with --task self_contradiction the "
        "contradiction scorer on DECODE-format records, and optionally run the check examples."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--task",
            choices=TASKS,
            default="groundedness",
            help="what --data measures (default groundedness)",
        )
        parser.add_argument(
            "--data",
            metavar="FILE",
            help="labelled records: groundedness JSONL, or DECODE JSON array / JSONL",
        )
        parser.add_argument(
            "--natural",
            metavar="DIR",
            help="labelled transcript files DIR/*.jsonl: precision/recall/F1 per rule",
        )
        parser.add_argument(
            "--claims",
            metavar="DIR",
            help="claim-labelled transcript files DIR/*.jsonl: precision/recall of the rules "
            "reporting unsupported sentences",
        )
        parser.add_argument(
            "--part",
            choices=("A", "B"),
            help="with --task self_contradiction: DECODE dev part A (even positions, where the "
            "head's threshold was picked) or B (odd positions: the figure to report)",
        )
        parser.add_argument(
            "--from-triage",
            metavar="ORG",
            help="the organization's triage labels: per rule precision and misses",
        )
        parser.add_argument(
            "--lab",
            action="store_true",
            help="with --from-triage: the lab's own runs (selftest, canary) instead",
        )
        parser.add_argument(
            "--out",
            metavar="FILE.jsonl",
            help="with --from-triage: write the labelled cases as dialogues for --natural",
        )
        parser.add_argument("--json", dest="json_path", metavar="PATH", help="write figures")
        parser.add_argument(
            "--examples",
            nargs="?",
            const="",
            default=None,
            metavar="DIR",
            help="also run the labelled check examples (default folder when DIR is omitted)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        given = opts["data"] or opts["natural"] or opts["claims"] or opts["from_triage"]
        if not given and opts["examples"] is None:
            raise CommandError(
                "give --data FILE, --natural DIR, --claims DIR, --from-triage ORG and/or "
                "--examples [DIR]",
                returncode=2,
            )
        if (opts["out"] or opts["lab"]) and not opts["from_triage"]:
            raise CommandError("--out and --lab go with --from-triage ORG", returncode=2)
        report: dict[str, Any] = {}
        if opts["from_triage"]:
            report["from_triage"] = self._from_triage(
                opts["from_triage"], lab=opts["lab"], out=opts["out"]
            )
        if opts["natural"]:
            report["natural"] = natural_figures(Path(opts["natural"]))
            self.stdout.write(format_natural(report["natural"]))
        if opts["claims"]:
            report["claims"] = natural_figures(Path(opts["claims"]), claims=True)
            self.stdout.write(format_natural(report["claims"]))
        if opts["data"] and opts["task"] == "self_contradiction":
            records = dev_part(read_decode(Path(opts["data"])), opts["part"])
            semantic = file_judge_config().semantic
            figures = calibrate_contradiction(records, semantic=semantic)
            report = {
                "task": "self_contradiction",
                "data": str(opts["data"]),
                "part": opts["part"],
                **figures,
            }
            self.stdout.write(format_contradiction_figures(figures))
        elif opts["data"]:
            figures = calibrate(read_records(Path(opts["data"])))
            report = {"data": str(opts["data"]), **figures}
            self.stdout.write(format_figures(figures))
        failure = None
        if opts["examples"] is not None:
            from judge.examples import run_examples

            root = Path(opts["examples"]) if opts["examples"] else None
            result = run_examples(root)
            self.stdout.write(result.table())
            report["examples_ok"] = bool(result.ok)
            if not result.ok:
                failure = "some check examples failed (see the table above)"
        if opts["json_path"]:
            Path(opts["json_path"]).write_text(json.dumps(report, indent=2), "utf-8")
        if failure:
            raise CommandError(failure)

    def _from_triage(self, slug: str, *, lab: bool, out: str | None) -> dict[str, Any]:
        """`--from-triage`: the figures (printed), and the export written to `out`."""
        from qalab.database import require_migrated
        from qalab.models import Organization
        from runs.triage_export import export_figures, format_export, triage_export

        require_migrated()
        organization = Organization.objects.filter(slug=slug).first()
        if organization is None:
            raise CommandError(f"no organization with slug {slug!r}", returncode=2)
        export = triage_export(organization, lab=lab)
        figures = {"organization": slug, "lab": lab, **export_figures(export)}
        self.stdout.write(format_export(figures))
        if out:
            path = Path(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in export.lines)
            path.write_text(text, "utf-8")
            figures["out"] = str(path)
            self.stdout.write(
                f"wrote {len(export.lines)} dialogue(s) to {path} "
                f"(measure a judge on them: qalab_calibrate --natural {path.parent})"
            )
        return figures
