"""At the end of a bench session, the table of every figure in `var/bench.json` (see
`tests/bench/figures.py`), with its target and whether it is met."""

from __future__ import annotations

from typing import Any

from tests.bench.figures import BENCH_JSON, load, table


def pytest_terminal_summary(terminalreporter: Any) -> None:
    data = load()
    if not data:
        return
    terminalreporter.section(f"bench figures ({BENCH_JSON.relative_to(BENCH_JSON.parents[1])})")
    for line in table(data):
        terminalreporter.write_line(line)
