"""An organization's trend page: the overall score and the findings by severity of its last N
reported runs of a real bot, as an inline SVG chart (one score line per responder, stacked
findings bars below) and, for screen readers and copying, a table of the same numbers.

Only organizations the user may see (`qalab.orgs.organizations_for`): another is a 404.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from qalab.domain import SEVERITIES
from qalab.models import Organization
from qalab.orgs import organizations_for
from runs.admin.common import RunPagesBase
from runs.admin.listing import short_responder
from runs.report.words import share_pct
from runs.trends import TrendPoint, org_trend

SIZES = (10, 30, 100)
DEFAULT_SIZE = 30
# Responder lines (no red, amber or grey: those are the severities).
PALETTE = ("#2471a3", "#8e44ad", "#138d75", "#a04000", "#1b2631", "#c2185b")
SEVERITY_COLOR = {"critical": "#c0392b", "major": "#b7950b", "minor": "#95a5a6"}

# The chart's box (viewBox units): a score panel above a findings panel, run ids below.
WIDTH, LEFT, RIGHT = 760, 48, 12
SCORE_TOP, SCORE_BOTTOM = 22, 152
BARS_TOP, BARS_BOTTOM = 180, 250
HEIGHT = 276


@dataclass
class ChartPoint:
    x: float
    y: float
    point: TrendPoint
    url: str
    label: str


@dataclass
class Series:
    responder: str
    short: str
    color: str
    points: list[ChartPoint] = field(default_factory=list)

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    run_id: int
    severity: str
    count: int
    color: str


@dataclass
class TrendChart:
    series: list[Series]
    bars: list[Bar]
    x_labels: list[tuple[float, str]]
    max_findings: int
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    score_ticks: list[tuple[float, str]] = field(default_factory=list)
    bars_top: int = BARS_TOP
    bars_bottom: int = BARS_BOTTOM
    bars_mid: float = (BARS_TOP + BARS_BOTTOM) / 2


def point_label(p: TrendPoint) -> str:
    counts = ", ".join(f"{p.count(s)} {s}" for s in SEVERITIES)
    return f"Run #{p.run_id} · {p.responder_spec} · {share_pct(p.score)} · {counts}"


def trend_chart(points: list[TrendPoint]) -> TrendChart:
    """Where each run's score point and findings bars go, oldest run on the left."""
    band = (WIDTH - LEFT - RIGHT) / max(1, len(points))
    bar_width = min(18.0, band * 0.6)
    max_findings = max([p.findings for p in points] + [1])
    series: dict[str, Series] = {}
    bars: list[Bar] = []
    x_labels: list[tuple[float, str]] = []
    every = max(1, -(-len(points) // 12))
    for i, p in enumerate(points):
        x = LEFT + (i + 0.5) * band
        line = series.get(p.responder_spec)
        if line is None:
            color = PALETTE[len(series) % len(PALETTE)]
            line = series[p.responder_spec] = Series(
                p.responder_spec, short_responder(p.responder_spec), color
            )
        y = SCORE_BOTTOM - (SCORE_BOTTOM - SCORE_TOP) * max(0.0, min(1.0, p.score))
        url = reverse("admin:runs_run_report", args=[p.run_id])
        line.points.append(ChartPoint(x, y, p, url, point_label(p)))
        base = float(BARS_BOTTOM)
        for severity in SEVERITIES:
            n = p.count(severity)
            if not n:
                continue
            height = (BARS_BOTTOM - BARS_TOP) * n / max_findings
            base -= height
            bars.append(
                Bar(
                    x - bar_width / 2,
                    base,
                    bar_width,
                    height,
                    p.run_id,
                    severity,
                    n,
                    SEVERITY_COLOR[severity],
                )
            )
        if i % every == 0 or i == len(points) - 1:
            x_labels.append((x, f"#{p.run_id}"))
    ticks = [
        (SCORE_BOTTOM - (SCORE_BOTTOM - SCORE_TOP) * v, f"{v * 100:.0f}%") for v in (0, 0.5, 1)
    ]
    return TrendChart(
        series=list(series.values()),
        bars=bars,
        x_labels=x_labels,
        max_findings=max_findings,
        score_ticks=ticks,
    )


class TrendPages(RunPagesBase):
    def _organization(self, request: HttpRequest, key: str) -> Organization:
        """The organization by slug (or id) if the user may see it, else 404."""
        orgs = organizations_for(request.user)
        org = orgs.filter(slug=key).first()
        if org is None and key.isascii() and key.isdigit():  # "²".isdigit() too
            org = orgs.filter(pk=int(key)).first()
        if org is None:
            raise Http404("No such organization.")
        return org

    def trend_view(self, request: HttpRequest, org: str) -> HttpResponse:
        organization = self._organization(request, org)
        size = request.GET.get("n", "")
        limit = (
            int(size) if size.isascii() and size.isdigit() and int(size) in SIZES else DEFAULT_SIZE
        )
        points = org_trend(
            runs=self.get_queryset(request), organization_id=organization.pk, limit=limit
        )
        context: dict[str, Any] = self._context(
            request,
            f"Score trend — {organization.name}",
            organization=organization,
            points=points,
            rows=[(p, short_responder(p.responder_spec)) for p in points],
            chart=trend_chart(points),
            severities=[(s, SEVERITY_COLOR[s]) for s in SEVERITIES],
            limit=limit,
            sizes=SIZES,
            runs_url=reverse("admin:runs_run_changelist")
            + f"?organization__id__exact={organization.pk}",
        )
        return TemplateResponse(request, "admin/runs/run/trend.html", context)
