"""`manage.py qalab_calibrate --data FILE.jsonl [--json PATH] [--examples [DIR]]`.

Measures the groundedness scorer (`judge.groundedness.support_score`) on human-labelled data:
one JSON object per line, `{"knowledge", "history", "response", "label"}` with label
`grounded` or `ungrounded`. `ungrounded` is the positive class and `1 - support_score` its
score. Prints N, AUROC, and balanced accuracy, precision, recall and F1 at
`UNGROUNDED_THRESHOLD`, next to the word-overlap baseline's AUROC; `--json` writes the same.
`--examples [DIR]` also runs the labelled check examples (`judge.examples.run_examples`) and
fails when any is wrong. `scripts/begin_to_jsonl.py` converts the BEGIN dev files.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judge.groundedness import (
    UNGROUNDED_THRESHOLD,
    auroc,
    baseline_support,
    confusion,
    support_score,
)

LABELS = {"grounded": False, "ungrounded": True}
_FIELDS = ("knowledge", "history", "response", "label")


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
        "precision/recall/F1 for 'ungrounded'), and optionally run the check examples."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", metavar="FILE.jsonl", help="labelled JSONL records")
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
        if not opts["data"] and opts["examples"] is None:
            raise CommandError("give --data FILE.jsonl and/or --examples [DIR]", returncode=2)
        report: dict[str, Any] = {}
        if opts["data"]:
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
