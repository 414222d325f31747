"""Core figures of `make bench` (issue 19, point 2), each written to `var/bench.json`
(`tests/bench/figures.py`):

- `judge_cpu_s`: CPU seconds of the deterministic checks and the semantic layer (`judge_case`,
  no LLM findings) over every case of an offline Regression run of the demo org, with the
  judge's caches of texts (and the encoder's embeddings) emptied first (as for a run whose KBs
  and replies the process has not read), best of 3 passes; target at most 3 s (issue 32).
- `semantic_load_s`: wall seconds to read, verify (sha256) and load the encoder's model files
  in a fresh process; target at most 1 s.
- `reservations_per_s`, `budget_exceeded`: 16 threads, each on its own database connection,
  reserve and settle tokens on one run through `DbLedger` until denied; reservations per second
  overall, and whether `tokens_used + tokens_reserved` ever passed the budget (target: never).
- `import_s_per_mb`: `qalab_import_org` seconds per MB of KB at 5 MB (and at 1 MB in
  `import_sizes`); target at most 5 s per MB, and roughly linear (5 MB no worse than twice the
  1 MB rate per MB).
"""

from __future__ import annotations

import functools
import gc
import threading
import time
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connections
from django.db.models import Sum

from judge.engine import judge_case
from judge.schemas import CaseTranscript
from judge.semantic.encoder import get_encoder
from qalab.llm import BudgetExceeded, Usage
from runs import services
from runs.artifacts import load_manifest
from runs.budget import DbLedger
from runs.inline import InlineDispatcher
from runs.models import CaseStatus, LlmCall, Run, RunStatus
from runs.services.case_judging import judge_config
from runs.services.judging import case_transcript
from tests.bench.figures import record
from tests.big_kb import write_big_org
from tests.runs.bulk import bulk_runs

pytestmark = pytest.mark.slow

# Issue 32: with the semantic layer on, at most 3 s per Regression (2 s before the layer).
JUDGE_CPU_S = 3.0
SEMANTIC_LOAD_S = 1.0
JUDGE_PASSES = 3
IMPORT_S_PER_MB = 5.0
RESERVERS = 16
LEDGER_BUDGET = 400_000
RESERVE_TOKENS = 200


# --------------------------------------------------------------------------- judge CPU


def _regression_run(org: Any) -> Run:
    run = services.run_create(organization=org, preset="regression", seed=1)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run


def _forget_read_texts() -> int:
    """Empty the judge's caches of texts it has read (a KB's facts, passages, claims...), so
    the run is judged as a new run is: the pipeline has just judged these very texts in this
    process. Unbounded caches (word lists, the check registry) and the per-word stem caches are
    kept, as a worker that has judged earlier runs keeps them. Returns how many were emptied."""
    emptied = 0
    for obj in gc.get_objects():
        if (
            isinstance(obj, functools._lru_cache_wrapper)
            and getattr(obj, "__module__", "").startswith(("judge.", "generator.", "qalab."))
            and obj.cache_info().maxsize is not None
            and obj.__qualname__ != "stem"
        ):
            obj.cache_clear()
            emptied += 1
    return emptied


def _transcripts(run: Run) -> list[CaseTranscript]:
    """Every completed case of the run as the judge stage reads it."""
    cases = run.cases.filter(status=CaseStatus.DONE).order_by("scenario_key")
    return [case_transcript(run, case) for case in cases]


@pytest.mark.django_db
def test_the_deterministic_checks_of_a_regression_run_take_little_cpu(demo_org: Any) -> None:
    run = _regression_run(demo_org)
    assert run.status == RunStatus.DONE, run.error
    transcripts = _transcripts(run)
    manifest = load_manifest(run.id)
    config = judge_config(run)
    # Best of a few passes, each from emptied caches: CPU time too grows when other processes
    # share the cores (caches, hyper-threads), and the least disturbed pass is the figure.
    passes = []
    for _ in range(JUDGE_PASSES):
        assert _forget_read_texts() >= 5
        get_encoder().cache_clear()
        started = time.process_time()
        judgements = [judge_case(t, manifest, config=config) for t in transcripts]
        passes.append(round(time.process_time() - started, 3))
    cpu = min(passes)
    turns = sum(len(t.turns) for t in transcripts)
    findings = sum(len(j.findings) for j in judgements)
    print(
        f"\njudge: {len(transcripts)} cases, {turns} turns, {findings} findings in {cpu:.2f} CPU s "
        f"(passes {passes})"
    )
    record(
        "judge_cpu_s",
        cpu,
        target=JUDGE_CPU_S,
        note=f"deterministic checks, Regression run: {len(transcripts)} cases, {turns} turns; "
        f"best of {JUDGE_PASSES} passes {passes}",
    )
    assert len(transcripts) == run.config["scenarios"] == 24
    assert config.semantic  # the default judge: the figure includes the layer
    assert cpu <= JUDGE_CPU_S


def test_the_semantic_model_loads_in_under_a_second() -> None:
    import subprocess
    import sys

    probe = (
        "import time; t = time.perf_counter(); from judge.semantic.encoder import Encoder; "
        "e = Encoder(); print(time.perf_counter() - t, e.load_seconds)"
    )
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    total, load = min(runs)
    record(
        "semantic_load_s",
        round(total, 3),
        target=SEMANTIC_LOAD_S,
        note=f"import + read, verify and load the model files, fresh process, best of 3 "
        f"(files alone {load:.3f} s)",
    )
    assert total <= SEMANTIC_LOAD_S


# --------------------------------------------------------------------------- token ledger


def _ledger_run(org: Any) -> Run:
    (run,) = bulk_runs(org, 1, status=RunStatus.SIMULATING, locked=False, verdict="")
    Run.objects.filter(pk=run.pk).update(
        token_budget=LEDGER_BUDGET, tokens_used=0, tokens_reserved=0, finished_at=None
    )
    return run


def _reserver(run_id: int, index: int, done: list[int], errors: list[BaseException]) -> None:
    """Reserve and settle until denied, on this thread's own connection."""
    try:
        ledger = DbLedger(run_id=run_id)
        n = 0
        while True:
            try:
                call = ledger.reserve(
                    role="simulator", purpose=f"bench:{index}:{n}", tokens=RESERVE_TOKENS
                )
            except BudgetExceeded:
                break
            # Usage below the reservation, varied: settling releases the rest.
            used = RESERVE_TOKENS // 2 + (n * 37 + index) % (RESERVE_TOKENS // 2)
            usage = Usage(
                prompt_tokens=used // 2, completion_tokens=used - used // 2, estimated=False
            )
            ledger.settle(call, usage=usage, status="ok", latency_ms=0)
            n += 1
        done.append(n)
    except BaseException as exc:  # reported by the main thread
        errors.append(exc)
    finally:
        connections.close_all()


def _watch(run_id: int, stop: threading.Event, seen: list[int]) -> None:
    """Sample used + reserved - budget while the reservers run (its maximum goes in `seen`)."""
    try:
        worst = -LEDGER_BUDGET
        while not stop.is_set():
            used, reserved, budget = Run.objects.values_list(
                "tokens_used", "tokens_reserved", "token_budget"
            ).get(pk=run_id)
            worst = max(worst, used + reserved - budget)
        seen.append(worst)
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_concurrent_reservations_never_overspend(demo_org: Any) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the ledger bench needs Postgres (make bench sets DATABASE_URL)")
    run = _ledger_run(demo_org)
    done: list[int] = []
    errors: list[BaseException] = []
    seen: list[int] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(run.pk, stop, seen))
    threads = [
        threading.Thread(target=_reserver, args=(run.pk, i, done, errors)) for i in range(RESERVERS)
    ]
    watcher.start()
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    stop.set()
    watcher.join()
    assert not errors, errors
    run.refresh_from_db()
    calls = LlmCall.objects.filter(run=run)
    ledger = calls.aggregate(actual=Sum("actual"), reserved=Sum("reserved"))
    reservations = sum(done)
    rate = reservations / seconds
    exceeded = (
        seen[0] > 0
        or run.tokens_used + run.tokens_reserved > run.token_budget
        or (ledger["actual"] or 0) > run.token_budget
    )
    print(
        f"\nledger: {RESERVERS} threads, {reservations} reservations in {seconds:.2f} s "
        f"({rate:.0f}/s); used {run.tokens_used:,} of {run.token_budget:,}, reserved "
        f"{run.tokens_reserved}, ledger rows sum {ledger['actual']:,}; "
        f"worst used + reserved - budget seen {seen[0]}"
    )
    record(
        "reservations_per_s",
        round(rate, 1),
        note=f"{RESERVERS} threads reserve + settle on one run (Postgres) until denied",
    )
    record(
        "budget_exceeded",
        exceeded,
        target=False,
        note="used + reserved ever above the budget (sampled, final state, ledger sum)",
    )
    assert len(done) == RESERVERS and reservations > 0
    assert run.budget_exhausted and run.tokens_reserved == 0
    assert run.tokens_used == ledger["actual"]
    assert calls.filter(status="denied").count() == RESERVERS
    assert not exceeded


# --------------------------------------------------------------------------- org import


def _import_rate(folder: Path, megabytes: int, slug: str) -> dict[str, float]:
    files = write_big_org(folder, total_bytes=megabytes * 2**20, slug=slug)
    mb = sum(f.size for f in files) / 2**20
    started = time.perf_counter()
    call_command("qalab_import_org", str(folder), stdout=StringIO())
    seconds = time.perf_counter() - started
    from qalab.models import KbDocument

    assert KbDocument.objects.filter(organization__slug=slug).count() == len(files)
    return {"mb": round(mb, 2), "s": round(seconds, 2), "s_per_mb": round(seconds / mb, 3)}


@pytest.mark.django_db
def test_importing_an_org_takes_seconds_per_mb_and_scales_linearly(tmp_path: Path) -> None:
    sizes = {f"{mb}MB": _import_rate(tmp_path / f"org-{mb}", mb, f"big-kb-{mb}") for mb in (1, 5)}
    print(f"\nimport: {sizes}")
    small, large = sizes["1MB"], sizes["5MB"]
    record(
        "import_s_per_mb",
        large["s_per_mb"],
        target=IMPORT_S_PER_MB,
        note=f"qalab_import_org, s per MB of KB at {large['mb']} MB",
    )
    record("import_sizes", sizes, note="qalab_import_org by KB size")
    assert large["s_per_mb"] <= IMPORT_S_PER_MB
    assert large["s_per_mb"] <= 2 * small["s_per_mb"], sizes
