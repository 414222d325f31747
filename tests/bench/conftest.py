"""At the end of a bench session, the table of every figure in `var/bench.json` (see
`tests/bench/figures.py`), with its target and whether it is met."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.bench.figures import BENCH_JSON, load, table

# Loaded before any bench test runs: figures recorded before this are an earlier session's.
_STARTED = datetime.now(UTC).isoformat(timespec="seconds")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    data = load()
    if not data:
        return
    terminalreporter.section(f"bench figures ({BENCH_JSON.relative_to(BENCH_JSON.parents[1])})")
    for line in table(data, since=_STARTED):
        terminalreporter.write_line(line)
