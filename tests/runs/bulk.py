"""Many runs fast: `bulk_create`d Run rows (no cases or turns) for list, trend and query-count
tests, and findings on them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.utils import timezone

from qalab.models import Organization
from runs.models import Run, RunFinding, RunStatus


def bulk_runs(
    organization: Organization,
    n: int,
    *,
    responders: Sequence[str] = ("reference",),
    scores: Sequence[float | None] = (0.8,),
    preset: str = "quick",
    status: str = RunStatus.DONE,
    verdict: str = "PASS_WITH_FINDINGS",
    selftest: bool = False,
    locked: bool = True,
) -> list[Run]:
    """`n` final runs of `organization`, cycling through `responders` and `scores`, created in
    order (ids ascending). `selftest` marks them as the lab's own (source.purpose)."""
    now = timezone.now()
    runs = [
        Run(
            organization=organization,
            preset=preset,
            status=status,
            responder_spec=responders[i % len(responders)],
            engine="offline",
            seed=i,
            settings_hash="0" * 64,
            source={"purpose": "selftest"} if selftest else {"purpose": "check"},
            token_budget=100_000,
            tokens_used=12_345 + i,
            started_at=now - timedelta(minutes=5),
            finished_at=now - timedelta(minutes=3),
            locked_at=now if locked else None,
            verdict=verdict,
            score_overall=scores[i % len(scores)],
        )
        for i in range(n)
    ]
    return Run.objects.bulk_create(runs, batch_size=2000)


def add_severity_findings(run: Run, counts: dict[str, int]) -> None:
    """Findings of the given severities on an unlocked run (no case)."""
    rows: list[Any] = []
    for severity, count in counts.items():
        for _ in range(count):
            position = len(rows)
            rows.append(
                RunFinding(
                    run=run,
                    position=position,
                    rule_id="bulk_rule",
                    severity=severity,
                    rationale="bulk",
                    fix_target="kb",
                    fix_text="fix it",
                    effort="S",
                    confidence=0.5,
                    detector="test",
                    fingerprint=f"{run.pk:032d}{position:032d}",
                )
            )
    RunFinding.objects.bulk_create(rows)
