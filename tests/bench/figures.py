"""The bench figures file, `var/bench.json`: one writer for every bench test.

A bench test measures something and calls `record(key, value, target=..., note=...)`. The file
is read, merged and written back on each call (under a lock), so tests in any file, in any
order, each add their own keys and keep everyone else's; a key measured again replaces its old
figure. `tests/bench/conftest.py` prints the table of every figure at the end of `make bench`.

The file:

    {
      "machine": {"cpus": 8, "python": "3.12.3", "platform": "...", "date": "..."},
      "report_ms": 84.1,                      # every figure at the top level, by its key
      "report_sizes": {"200": {...}, ...},    # details: any JSON value
      "targets": {                            # one entry per recorded key
        "report_ms": {"target": 150, "at_least": false, "note": "...", "measured_at": "..."}
      }
    }

A target is met when the value is at most the target (`at_least=True`: at least the target),
or, for a bool or a string target, when the value equals it. `target=None`: a figure with no
goal (shown, never failing).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCH_JSON = ROOT / "var" / "bench.json"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


@contextmanager
def _locked(path: Path) -> Iterator[dict[str, Any]]:
    """The figures, to change in place; written back when the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = load(path)
        yield data
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        tmp.replace(path)


def load(path: Path = BENCH_JSON) -> dict[str, Any]:
    """The figures recorded so far ({} if none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def record(
    key: str,
    value: Any,
    *,
    target: float | bool | str | None = None,
    at_least: bool = False,
    note: str = "",
    path: Path = BENCH_JSON,
) -> None:
    """Merge one figure into `var/bench.json` (created with `var/` if missing).

    `value`: any JSON value (a number or a bool for a figure with a target; a dict for details
    such as `report_sizes`). `target`: the goal (see the module docstring); `note`: a few words
    shown in the table (the unit, what was measured). Also refreshes the `machine` note.
    """
    with _locked(path) as data:
        targets = data.pop("targets", {})
        data.pop("machine", None)
        figures = {"machine": machine(), **data, key: value}
        targets[key] = {
            "target": target,
            "at_least": at_least,
            "note": note,
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        data.clear()
        data.update(figures, targets=targets)  # the machine first, the targets last


def met(value: Any, entry: dict[str, Any]) -> bool | None:
    """Whether `value` meets its target entry (None: no target, or not comparable)."""
    target = entry.get("target")
    if target is None:
        return None
    if isinstance(target, bool | str):
        return bool(value == target)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value >= target if entry.get("at_least") else value <= target


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, dict | list):
        return "(details)"
    return str(value)


def table(data: dict[str, Any], *, since: str = "") -> list[str]:
    """The figures as text lines: key, value, target, met, note (details and the machine note
    leave out the columns they have no use for). A figure measured before `since` (an ISO time,
    the session's start) is marked as left from an earlier session."""
    targets = data.get("targets", {})
    rows = [("figure", "value", "target", "met", "note")]
    for key, value in data.items():
        if key in ("machine", "targets"):
            continue
        entry = targets.get(key, {})
        goal = entry.get("target")
        if goal is None:
            shown_goal = ""
        elif isinstance(goal, bool | str):
            shown_goal = f"= {goal}"
        else:
            shown_goal = ("≥ " if entry.get("at_least") else "≤ ") + _show(goal)
        ok = met(value, entry)
        note = entry.get("note", "")
        measured = entry.get("measured_at", "")
        if since and measured < since:
            note = f"{note} [earlier session, {measured or 'time unknown'}]".strip()
        rows.append(
            (
                key,
                _show(value),
                shown_goal,
                {True: "yes", False: "NO", None: ""}[ok],
                note,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    m = data.get("machine")
    if m:
        lines.append(
            f"machine: {m['cpus']} CPUs, Python {m['python']}, {m['platform']}, {m['date']}"
        )
    return lines
