"""Convert FaithDial's hallucination audit (CSV) to the JSONL format of `qalab_calibrate`.

FaithDial's authors (Dziri et al., NAACL 2022, "On the Origin of Hallucinations in
Conversational Models"; github McGill-NLP/FaithDial, `data-audit/`, MIT licence) had humans
label gold responses of Wizard of Wikipedia, CMU-DoG and TopicalChat and the responses of three
models (GPT2, DoHA, CTRL) trained on them, with BEGIN's taxonomy. Each output line is

    {"knowledge", "history", "response", "label": "grounded"|"ungrounded", "source", "file"}

with entailment (also when uncooperative) -> grounded, hallucination or partial hallucination
(`entailment,hallucination`) -> ungrounded, and generic or unlabelled rows dropped.

`--split dev|held-out` keeps a fixed third of the rows (by a hash of the response) as held-out
and the rest as dev, so the check can be tuned on one part and measured once on the other.

Usage:

    python scripts/faithdial_audit_to_jsonl.py data-audit/*/*.csv --split dev -o audit_dev.jsonl
    python manage.py qalab_calibrate --data audit_dev.jsonl

Exit 0 on success, 1 when a file is not an audit CSV (the message names it), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

GROUNDED = {"entailment", "entailment,uncooperative", "uncooperative"}
UNGROUNDED = {"hallucination", "hallucinated", "partial hallucination", "entailment,hallucination"}
RESPONSE_COLUMNS = ("response", "gpt2", "doha", "ctrl")
SOURCES = {"wow": "wow", "cmu": "cmu-dog", "topical": "topicalchat"}


class ConversionError(ValueError):
    """A file that is not one of the audit's CSV files."""


def _label(raw: str) -> str | None:
    # The annotators' spellings vary: "Entailment", "entailmentt,uncooperative",
    # "entailment. uncooperative".
    key = raw.strip().casefold().replace(". ", ",").replace("entailmentt", "entailment")
    if key in GROUNDED:
        return "grounded"
    if key in UNGROUNDED:
        return "ungrounded"
    return None


def held_out(response: str) -> bool:
    """Whether a row belongs to the held-out third (fixed by the response text)."""
    digest = hashlib.sha1(response.encode("utf-8"), usedforsecurity=False).hexdigest()
    return int(digest, 16) % 3 == 0


def convert(path: Path, split: str | None = None) -> Iterator[dict[str, str]]:
    """The calibrate records of one audit CSV file, optionally only one split's."""
    source = next((name for key, name in SOURCES.items() if key in path.name), "unknown")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = set(reader.fieldnames or ())
        response_column = next((c for c in RESPONSE_COLUMNS if c in columns), None)
        knowledge_column = "knowledge" if "knowledge" in columns else "evidence"
        label_column = "begin_label" if "begin_label" in columns else "BEGIN"
        missing = {knowledge_column, label_column, "history"} - columns
        if response_column is None or missing:
            raise ConversionError("not a FaithDial audit CSV (no response, label or knowledge)")
        for row in reader:
            label = _label(row.get(label_column) or "")
            response = (row.get(response_column) or "").strip()
            knowledge = (row.get(knowledge_column) or "").strip()
            if label is None or not response or not knowledge:
                continue
            if split is not None and held_out(response) != (split == "held-out"):
                continue
            yield {
                "knowledge": knowledge,
                "history": row.get("history") or "",
                "response": response,
                "label": label,
                "source": source,
                "file": path.name,
            }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", type=Path, nargs="+", help="audit CSV files")
    parser.add_argument("--split", choices=("dev", "held-out"), help="keep one split only")
    parser.add_argument("-o", "--output", type=Path, help="JSONL output (default: stdout)")
    args = parser.parse_args(argv)
    lines: list[str] = []
    for source in args.sources:
        try:
            lines += [json.dumps(r, ensure_ascii=False) for r in convert(source, args.split)]
        except (OSError, UnicodeDecodeError, csv.Error, ConversionError) as exc:
            print(f"{source}: {exc}", file=sys.stderr)
            return 1
    text = "".join(f"{line}\n" for line in lines)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {len(lines)} records to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
