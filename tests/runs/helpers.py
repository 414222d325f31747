"""Helpers for run tests: start runs inline and read their reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError


def qalab_run(*args: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """Call `qalab_run ... --json` and return (exit code, report)."""
    out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    code = 0
    try:
        call_command("qalab_run", *args, "--json", str(out))
    except CommandError as exc:
        code = exc.returncode
    return code, json.loads(out.read_text())


def transcript_text(case: dict[str, Any]) -> str:
    parts = []
    for turn in case["turns"]:
        parts += [turn["customer"], turn["reply"], *map(str, turn["extracted"].values())]
    return "\n".join(parts)
