"""`python -m runs.report [PATH]`: write the report's JSON Schema (default
docs/report.schema.json, which is checked in and tested against `RunReport`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runs.report.schema import report_json_schema

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "report.schema.json"


def schema_text() -> str:
    return json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> None:
    path = Path(argv[0]) if argv else SCHEMA_PATH
    path.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
