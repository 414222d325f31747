"""Row -> report-part conversions that the report and the delta share: scores, severity counts
and the order findings are listed in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from qalab.domain import SEVERITIES
from runs.models import RunFinding
from runs.report.schema import Scores, SeverityCounts


def rounded_scores(g: float | None, e: float | None, q: float | None, o: float | None) -> Scores:
    """The four dimensions of a run or a case, rounded to 4 places (None stays None)."""

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    return Scores(
        groundedness=r(g), extraction_accuracy=r(e), conversation_quality=r(q), overall=r(o)
    )


def severity_counts(severities: Iterable[str]) -> SeverityCounts:
    counts = Counter(severities)
    return SeverityCounts(**{s: counts.get(s, 0) for s in SEVERITIES})


def severity_sort_key(f: RunFinding) -> tuple[int, int]:
    """Critical -> major -> minor, in judge order within a severity."""
    return (SEVERITIES.index(f.severity), f.position)
