"""The admin pages at size (`make bench`, issue 19 point 2): the report page of a run with
hundreds of findings and the runs list over 10,000 runs. Each is measured at two sizes: the
median server time of a page over several requests (after one warm-up) and its SQL query count,
which must not grow with the size. Figures go to `var/bench.json` (`tests/bench/figures.py`).

Targets: each page in at most 150 ms (median, at the larger size), in the same number of
queries at both sizes; the report page's peak Python memory (tracemalloc) under 100 MB.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from runs import services
from runs.models import Run
from tests.bench.figures import record
from tests.runs.bulk import bulk_runs
from tests.runs.helpers import add_findings, start_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

PAGE_MS = 150
PEAK_MIB = 100  # peak Python memory of one report page request
REQUESTS = 5


def measure_page(client: Client, url: str, *, requests: int = REQUESTS) -> dict[str, Any]:
    """One warm-up request, then `requests` timed ones: the median and fastest milliseconds,
    the query count (of the first timed request) and the page size."""
    warm = client.get(url)
    assert warm.status_code == 200, warm.status_code
    times = []
    queries = 0
    for i in range(requests):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
        if i == 0:
            queries = len(captured)
    return {
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "queries": queries,
        "kib": round(len(response.content) / 1024),
    }


def _reported_run(org: Any, findings: int, seed: int) -> Run:
    """A Quick run of the price-inventing canary with `findings` more findings, reported and
    locked like any run."""
    run = start_run(org, responder="canary:invent_price", scenarios=None, seed=seed, lock=False)
    add_findings(run, findings)
    services.run_report(run_id=run.id)
    run.refresh_from_db()
    assert run.locked_at is not None
    return run


def test_the_report_page_time_and_queries_do_not_grow_with_findings(
    admin_client: Client, demo_org: Any
) -> None:
    sizes: dict[str, dict[str, Any]] = {}
    for added, seed in ((200, 18), (400, 19)):
        run = _reported_run(demo_org, added, seed)
        findings = run.findings.count()
        url = reverse("admin:runs_run_report", args=[run.pk])
        sizes[str(findings)] = measure_page(admin_client, url)
        tracemalloc.start()
        admin_client.get(url)
        sizes[str(findings)]["peak_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
        tracemalloc.stop()
        print(f"\nreport page, {findings} findings: {sizes[str(findings)]}")
    small, large = (sizes[k] for k in sorted(sizes, key=int))
    record(
        "report_ms",
        large["median_ms"],
        target=PAGE_MS,
        note=f"report page, median ms, {max(sizes, key=int)} findings",
    )
    record("report_queries", large["queries"], note="report page, SQL queries (same at both)")
    record("report_sizes", sizes, note="report page by number of findings")
    assert min(int(k) for k in sizes) >= 200
    assert small["queries"] == large["queries"], sizes
    assert large["median_ms"] <= PAGE_MS, sizes
    assert large["peak_mib"] < PEAK_MIB, sizes


def test_the_runs_list_time_and_queries_do_not_grow_with_runs(
    admin_client: Client, demo_org: Any
) -> None:
    url = reverse("admin:runs_run_changelist")
    sizes: dict[str, dict[str, Any]] = {}
    responders = ("reference", "https://bots.example.com/api/chat", "python:x:y")
    for total in (1_000, 10_000):
        bulk_runs(
            demo_org,
            total - Run.objects.count(),
            responders=responders,
            scores=(0.4, 0.7, 0.9),
        )
        assert Run.objects.count() == total
        sizes[str(total)] = measure_page(admin_client, url)
        print(f"\nruns list, {total:,} runs: {sizes[str(total)]}")
    small, large = sizes["1000"], sizes["10000"]
    record(
        "runs_list_ms", large["median_ms"], target=PAGE_MS, note="runs list, median ms, 10,000 runs"
    )
    record("runs_list_queries", large["queries"], note="runs list, SQL queries (same at both)")
    record("runs_list_sizes", sizes, note="runs list by number of runs")
    assert small["queries"] == large["queries"], sizes
    assert large["median_ms"] <= PAGE_MS, sizes
