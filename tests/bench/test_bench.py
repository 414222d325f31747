"""Benchmarks (`make bench`; marked slow, so not part of `make test`). Each prints what it
measured and holds a goal with room for slower machines; the figures go in docs/performance.md.
The report page, the runs list, the judge's CPU, the token ledger and the org import are
measured in `test_pages_bench.py` and `test_core_bench.py` and recorded in `var/bench.json`.

Goals:
- an offline Quick run (12 cases, in-process) completes in under 60 s;
- the groundedness support score handles the BEGIN WoW dev set (430 responses) in under 5 s;
- the generator's fact check and the judge's service and day claims over a generated 5 MB KB
  (every fixture carries the whole KB) take under 30 s per MB (they were quadratic: minutes
  per MB).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from runs import services
from runs.inline import InlineDispatcher
from runs.models import Run
from tests.big_kb import write_big_org

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
BIG_KB_BYTES = 5 * 2**20


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


def test_the_facts_of_a_5_mb_kb_are_read_in_seconds(tmp_path: Path) -> None:
    from generator.facts import critical_facts, missing_facts
    from generator.manifest import generate_manifest
    from judge.claims import day_claims, service_claims
    from qalab.llm import NullLedger, get_engine
    from qalab.org_folder import load_org_folder

    write_big_org(tmp_path / "org", total_bytes=BIG_KB_BYTES)
    org = load_org_folder(tmp_path / "org")
    text = "\n".join(f"# {d.title}\n{d.text}" for d in org.kb)  # as a fixture carries it
    mb = len(text.encode("utf-8")) / 2**20
    manifest = generate_manifest(org, get_engine("offline", ledger=NullLedger()))
    timings = {}
    started = time.perf_counter()
    lost = missing_facts(text, critical_facts(org))
    timings["fact check"] = time.perf_counter() - started
    started = time.perf_counter()
    services = service_claims(text, manifest)
    timings["service claims"] = time.perf_counter() - started
    started = time.perf_counter()
    days = day_claims(text)
    timings["day claims"] = time.perf_counter() - started
    seconds = sum(timings.values())
    detail = ", ".join(f"{name} {s:.1f} s" for name, s in timings.items())
    print(f"\nreading a {mb:.1f} MB KB: {detail}; {seconds / mb:.2f} s per MB")
    assert lost == [] and services and days
    assert seconds / mb < 30
