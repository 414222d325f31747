"""Reads of score trends over runs: the sparkline of each row of the runs list (organization +
responder) and an organization's trend page (score and findings by severity per run).

Both leave the lab's own runs out (selftest, canary: `Run.objects.of_real_bots()`): they are
not a real bot's results. Each is one query, whatever the number of runs or rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connections
from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from qalab.domain import SEVERITIES
from runs.models import FINAL_STATUSES, RunQuerySet

SPARK_POINTS = 10
# The sparkline's box: scores 0..1 drawn from y=22 (0 %) up to y=2 (100 %).
SPARK_WIDTH = 60
SPARK_HEIGHT = 24


@dataclass(frozen=True)
class Sparkline:
    """The overall scores of the last final runs of one organization + responder, oldest first."""

    run_ids: tuple[int, ...]
    scores: tuple[float, ...]

    @property
    def points(self) -> list[tuple[float, float]]:
        step = SPARK_WIDTH / max(1, len(self.scores) - 1)
        x0 = 0.0 if len(self.scores) > 1 else SPARK_WIDTH / 2
        return [(x0 + i * step, 22 - 20 * score) for i, score in enumerate(self.scores)]

    @property
    def polyline(self) -> str:
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in self.points)

    @property
    def last_point(self) -> tuple[float, float]:
        return self.points[-1]

    @property
    def label(self) -> str:
        scores = ", ".join(f"{s * 100:.0f}%" for s in self.scores)
        return f"overall score of the last {len(self.scores)} final runs, oldest first: {scores}"


def run_sparklines(
    *, runs: RunQuerySet, pairs: Iterable[tuple[int, str]], points: int = SPARK_POINTS
) -> dict[tuple[int, str], Sparkline]:
    """For each (organization id, responder spec): the overall score of its last `points`
    final, scored runs of a real bot, among `runs` (those the user may see), oldest first.

    One query. On Postgres a UNION ALL of one `ORDER BY id DESC LIMIT points` per pair, each
    an index range scan of (organization, responder_spec, -id), so its cost does not grow with
    the runs. A database that cannot limit the arms of a UNION (SQLite) ranks with a window.
    """
    wanted = sorted(set(pairs))
    if not wanted:
        return {}
    base = (
        runs.of_real_bots()
        .filter(status__in=FINAL_STATUSES, score_overall__isnull=False)
        .select_related(None)
    )
    fields = ("organization_id", "responder_spec", "id", "score_overall")
    if connections[base.db].features.supports_slicing_ordering_in_compound:
        arms = [
            base.filter(organization_id=org_id, responder_spec=spec)
            .order_by("-id")
            .values_list(*fields)[:points]
            for org_id, spec in wanted
        ]
        rows = arms[0].union(*arms[1:], all=True) if len(arms) > 1 else arms[0]
    else:
        rows = _ranked(base, wanted, points).values_list(*fields)
    series: dict[tuple[int, str], list[tuple[int, float]]] = {}
    for org_id, spec, run_id, score in rows:
        series.setdefault((org_id, spec), []).append((run_id, score))
    out = {}
    for key, values in series.items():
        values.sort()
        out[key] = Sparkline(
            run_ids=tuple(run_id for run_id, _ in values),
            scores=tuple(score for _, score in values),
        )
    return out


def _ranked(base: RunQuerySet, pairs: list[tuple[int, str]], points: int) -> RunQuerySet:
    """The last `points` runs of each pair, by a window function (one query on any database)."""
    match = Q()
    for org_id, spec in pairs:
        match |= Q(organization_id=org_id, responder_spec=spec)
    return (
        base.filter(match)
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("organization_id"), F("responder_spec")],
                order_by=F("id").desc(),
            )
        )
        .filter(rank__lte=points)
        .order_by()
    )


@dataclass(frozen=True)
class TrendPoint:
    """One reported run on an organization's trend page."""

    run_id: int
    created_at: datetime
    responder_spec: str
    preset: str
    verdict: str
    score: float
    critical: int
    major: int
    minor: int

    @property
    def score_pct(self) -> str:
        return f"{self.score * 100:.1f}"

    @property
    def findings(self) -> int:
        return self.critical + self.major + self.minor

    def count(self, severity: str) -> int:
        return int(getattr(self, severity))


def org_trend(*, runs: RunQuerySet, organization_id: int, limit: int = 30) -> list[TrendPoint]:
    """The organization's last `limit` reported (locked, scored) runs of a real bot among `runs`,
    oldest first, with their findings counted per severity. One query."""
    counts = {
        f"n_{severity}": Count("findings", filter=Q(findings__severity=severity))
        for severity in SEVERITIES
    }
    rows = (
        runs.of_real_bots()
        .filter(
            organization_id=organization_id,
            locked_at__isnull=False,
            score_overall__isnull=False,
        )
        .select_related(None)
        .order_by("-id")
        .values("id", "created_at", "responder_spec", "preset", "verdict", "score_overall")
        .annotate(**counts)[:limit]
    )
    points = [
        TrendPoint(
            run_id=row["id"],
            created_at=row["created_at"],
            responder_spec=row["responder_spec"],
            preset=row["preset"],
            verdict=row["verdict"],
            score=row["score_overall"],
            critical=row["n_critical"],
            major=row["n_major"],
            minor=row["n_minor"],
        )
        for row in rows
    ]
    points.reverse()
    return points
