"""Benchmarks (`make bench`; marked slow, so not part of `make test`). Each prints what it
measured and holds a goal with room for slower machines; the figures go in the README.

Goals:
- an offline Quick run (12 cases, in-process) completes in under 60 s;
- the groundedness support score handles the BEGIN WoW dev set (430 responses) in under 5 s;
- the report page of a run with 240+ findings renders in under 2 s and peak Python memory for it
  stays under 100 MB.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from runs import services
from runs.inline import InlineDispatcher
from runs.models import Run
from tests.runs.helpers import add_findings, start_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _quick_run(org: Any, **kw: Any) -> tuple[Run, float]:
    started = time.perf_counter()
    run = services.run_create(organization=org, preset="quick", seed=1, **kw)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run, time.perf_counter() - started


def test_an_offline_quick_run_takes_under_a_minute(demo_org: Any) -> None:
    run, seconds = _quick_run(demo_org)
    print(
        f"\noffline Quick run: {seconds:.1f} s for {run.cases.count()} cases, "
        f"{run.tokens_used:,} estimated tokens, verdict {run.verdict}"
    )
    assert run.status == "done" and run.cases.count() == 12
    assert seconds < 60


def test_groundedness_scores_the_begin_wow_set_quickly() -> None:
    from scripts.begin_to_jsonl import convert

    source = SHARED_DATA / "begin_wow_dev.json"
    if not source.is_file():
        pytest.skip(f"{source} is not here (../shared/data)")
    from judge.support import support_score

    records = list(convert(json.loads(source.read_text(encoding="utf-8"))))
    started = time.perf_counter()
    for r in records:
        support_score(r["knowledge"], r["response"], r["history"])
    seconds = time.perf_counter() - started
    print(f"\ngroundedness: {len(records)} responses in {seconds:.2f} s")
    assert len(records) == 430
    assert seconds < 5


def test_the_report_page_of_a_big_run_renders_fast(admin_client: Any, demo_org: Any) -> None:
    # Judged but not locked yet: add 240 findings, then report (and lock) it like any run.
    run = start_run(demo_org, responder="canary:invent_price", scenarios=None, lock=False)
    add_findings(run, 240)
    services.run_report(run_id=run.id)
    url = reverse("admin:runs_run_report", args=[run.pk])
    admin_client.get(url)
    tracemalloc.start()
    started = time.perf_counter()
    response = admin_client.get(url)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    findings = run.findings.count()
    print(
        f"\nreport page: {findings} findings, {len(response.content) / 1024:.0f} KiB "
        f"in {seconds * 1000:.0f} ms, peak {peak / 2**20:.1f} MiB"
    )
    assert response.status_code == 200 and findings >= 240
    assert seconds < 2
    assert peak < 100 * 2**20
