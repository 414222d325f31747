"""Helpers for run tests: start runs inline and read their reports."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError

from qalab.models import Organization
from runs.inline import InlineDispatcher
from runs.models import Run, RunFinding

# The reference date tests pin their runs to (`qalab_run --as-of`), so no test depends on today.
AS_OF = date(2026, 11, 27)


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


def add_findings(run: Run, n: int) -> None:
    """Bulk-add `n` findings to a judged, unlocked run, spread over its cases and severities."""
    cases = list(run.cases.order_by("scenario_key"))
    template = run.findings.order_by("position").first()
    assert template is not None
    start = run.findings.count()
    RunFinding.objects.bulk_create(
        RunFinding(
            run=run,
            case=cases[i % len(cases)],
            position=start + i,
            turn_index=0,
            rule_id=f"bulk_rule_{i % 7}",
            severity=("critical", "major", "minor")[i % 3],
            subject=f"subject {i}",
            evidence=template.evidence,
            rationale="bulk",
            fix_target="kb",
            fix_text="fix it",
            effort="S",
            confidence=0.5,
            detector="test",
            fingerprint=f"{i:064d}",
        )
        for i in range(n)
    )


def report_json(run: Run, *, include_delta: bool = True) -> dict[str, Any]:
    """The run's JSON report, as the exports write it."""
    from runs.report.build import report_build

    return report_build(run=run, include_delta=include_delta).to_json()


def delta_json(run: Run, *, other: Run | None = None) -> dict[str, Any] | None:
    """The run's delta in its JSON form (None: nothing to compare with)."""
    from runs.report.delta import delta_build

    delta = delta_build(run=run, other=other)
    return None if delta is None else delta.to_json()
