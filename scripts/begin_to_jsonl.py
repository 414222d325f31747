"""Convert a BEGIN dev file (JSON array) to the JSONL format of `manage.py qalab_calibrate`.

BEGIN (Dziri et al., TACL 2022) labels a dialogue response against the knowledge it was meant
to be grounded in. Each input record has `knowledge`, `message` (the previous turn),
`response` and `begin_label`; each output line is

    {"knowledge": ..., "history": <message>, "response": ..., "label": "grounded"|"ungrounded"}

with `Fully attributable` -> grounded, `Not fully attributable` -> ungrounded, and `Generic`
records dropped (they state nothing to attribute). Other fields are ignored.

Usage:

    python scripts/begin_to_jsonl.py /work/shared/data/begin_wow_dev.json wow.jsonl
    python scripts/begin_to_jsonl.py IN.json            # JSONL to stdout
    python manage.py qalab_calibrate --data wow.jsonl

Exit 0 on success, 1 when the input is not a JSON array of BEGIN records (the message names
the bad record), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

LABELS = {"Fully attributable": "grounded", "Not fully attributable": "ungrounded"}
DROPPED = {"Generic"}


class ConversionError(ValueError):
    """A record that is not a BEGIN record."""


def convert(records: Iterable[object]) -> Iterator[dict[str, str]]:
    """The calibrate records of BEGIN `records`, Generic ones dropped."""
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise ConversionError(f"record {number}: expected an object")
        label = record.get("begin_label")
        if label in DROPPED:
            continue
        if label not in LABELS:
            raise ConversionError(f"record {number}: unknown begin_label {label!r}")
        fields = {k: record.get(k) for k in ("knowledge", "message", "response")}
        if not all(isinstance(v, str) for v in fields.values()):
            raise ConversionError(f"record {number}: knowledge, message, response must be text")
        yield {
            "knowledge": fields["knowledge"],
            "history": fields["message"],
            "response": fields["response"],
            "label": LABELS[label],
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="BEGIN dev file (JSON array)")
    parser.add_argument("target", type=Path, nargs="?", help="JSONL output (default: stdout)")
    args = parser.parse_args(argv)
    try:
        data = json.loads(args.source.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ConversionError("expected a JSON array of records")
        lines = [json.dumps(item, ensure_ascii=False) for item in convert(data)]
    except (OSError, json.JSONDecodeError, ConversionError) as exc:
        print(f"{args.source}: {exc}", file=sys.stderr)
        return 1
    text = "".join(f"{line}\n" for line in lines)
    if args.target:
        args.target.write_text(text, encoding="utf-8")
        print(f"wrote {len(lines)} records to {args.target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
