"""Helpers for run tests: start runs inline and read their reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError

from qalab.models import Organization
from runs.dispatch import InlineDispatcher
from runs.models import Run


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


class HoldingDispatcher(InlineDispatcher):
    """Inline like `--inline`, but the report stage is only noted: the run stops in
    `reporting`, judged and still unlocked, so a test can change its rows before locking it."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[int] = []

    def report(self, run_id: int) -> None:
        self.held.append(run_id)


class RecordingDispatcher:
    """Notes every hand-off and runs nothing: a test drives the stages itself."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def generate(self, run_id: int) -> None:
        self.calls.append(("generate", run_id))

    def simulate(self, case_id: int, *, delay: float | None = None) -> None:
        self.calls.append(("simulate", case_id))

    def judge(self, run_id: int) -> None:
        self.calls.append(("judge", run_id))

    def report(self, run_id: int) -> None:
        self.calls.append(("report", run_id))

    def stages(self) -> list[str]:
        return [stage for stage, _ in self.calls]


def start_run(
    organization: Organization,
    *,
    responder: str = "reference",
    scenarios: int | None = 2,
    seed: int = 18,
    preset: str = "quick",
    reuse_artifacts: int | None = None,
    lock: bool = True,
) -> Run:
    """A run through the real services, inline. `lock=False` stops it in `reporting` (judged,
    not locked); `lock=True` lets it finish and lock like any reported run."""
    from runs import services

    run = services.run_create(
        organization=organization,
        preset=preset,
        responder_spec=responder,
        scenarios=None if reuse_artifacts else scenarios,
        seed=seed,
        reuse_artifacts=reuse_artifacts,
    )
    dispatcher = InlineDispatcher() if lock else HoldingDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run


def generate_only(organization: Organization, *, scenarios: int = 2, seed: int = 18) -> Run:
    """A run whose test set is generated and whose cases are queued, nothing more played."""
    from runs import services

    run = services.run_create(organization=organization, scenarios=scenarios, seed=seed)
    services.run_generate(run_id=run.id, dispatcher=RecordingDispatcher())
    run.refresh_from_db()
    return run
