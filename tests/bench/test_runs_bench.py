"""Whole runs against latency (`make bench`, issue 19): overhead, tokens and worker memory.

A Quick and a Regression run go through a real Celery worker able to run every case at once,
on the openai engine against the local OpenAI-compatible server (realistic usage: prompt
tokens from prompt characters, completions of realistic length) and an HTTP bot, every LLM
and bot call delayed by LATENCY. Figures:

- `overhead_<preset>`: wall time of `qalab_run --wait` / (the run's chain of truly dependent
  calls x LATENCY). The chain comes from the run's own ledger and turns: the bot's preflight,
  then the longest generation task (items run side by side), the longest case (its customer
  and bot calls, turn after turn), the longest case review (review, then its confirmations
  side by side) and the top-action phrasing. Everything else in the wall time is the lab's.
- `tokens_<preset>`: tokens used / budget (by role in `tokens_<preset>_by_role`).
- `worker_rss_mb`: the largest peak RSS (VmHWM) of the worker's processes over both runs.
- `overhead_quick_at_1000ms` (no target): Quick again with 1 s per call; the lab's own cost is
  mostly CPU, fixed per run, so it weighs less against a slower model.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from runs.models import LlmCall, Run, RunTurn
from tests.bench.figures import record
from tests.conftest import run_celery_worker
from tests.factories import import_demo_org
from tests.llm_server import FakeOpenAI
from tests.responder_server import ResponderServer, default_reply
from tests.runs.helpers import AS_OF, qalab_run
from tests.runs.realistic_brain import realistic_brain
from tests.runs.test_openai_pipeline import _llm_env, openai_settings

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LATENCY = 0.3
SIZES = {"quick": (12, 4), "regression": (24, 5)}
ALL_AT_ONCE = 32  # cases and LLM tasks a worker may run at once: more than any preset has


def bot_reply(body: dict[str, Any]) -> dict[str, Any]:
    """The test bot's reply, asking for more and never complete: every case talks for its whole
    turn cap."""
    last = body["messages"][-1]["content"]
    reply = f"Thanks, noted: {last[:60]}. Could you tell me a little more?"
    return {**default_reply(body), "reply": reply, "status": "AWAITING_RESPONSE"}


def dependent_chain(run: Run) -> dict[str, int]:
    """The run's calls that had to wait for each other, by stage (see the module docstring)."""
    requests = Counter(
        LlmCall.objects.filter(run=run, reserved__gt=0).values_list("purpose", flat=True)
    )
    keys = list(run.cases.values_list("scenario_key", flat=True))
    turns = Counter(
        RunTurn.objects.filter(case__run=run).values_list("case__scenario_key", flat=True)
    )

    def calls(prefix: str) -> int:
        return sum(n for purpose, n in requests.items() if purpose.startswith(prefix))

    http_bot = bool(run.source.get("preflight"))
    generation = [n for p, n in requests.items() if p in ("manifest", "blueprints")]
    generation += [n for p, n in requests.items() if p.startswith("fixture:")]
    cases = [
        calls(f"customer:{k}/") + calls(f"responder:{k}/") + (turns.get(k, 0) if http_bot else 0)
        for k in keys
    ]
    reviews = []
    for k in keys:
        confirms = [n for p, n in requests.items() if p.startswith(f"judge:{k}:confirm")]
        reviews.append(requests.get(f"judge:{k}", 0) + max(confirms, default=0))
    return {
        "preflight": int(http_bot),
        "generation": max(generation, default=0),
        "simulation": max(cases, default=0),
        "judging": max(reviews, default=0),
        "top actions": requests.get("judge:actions", 0),
    }


def timeline(run: Run, started: datetime, ended: datetime) -> dict[str, float]:
    """Where the wall time went, in seconds: from the CLI's start to its end, by stage (a
    case's own review and checks are part of its simulation)."""
    cases = run.cases.all()
    first = min(c.started_at for c in cases if c.started_at)
    last = max(c.finished_at for c in cases if c.finished_at)
    marks = [
        ("to generation", run.started_at),
        ("generation", first),
        ("cases", last),
        ("judge stage and report", run.finished_at),
        ("to the CLI", ended),
    ]
    out, before = {}, started
    for name, at in marks:
        out[name] = round((at - before).total_seconds(), 2)
        before = at
    return out


def _family(pid: int) -> list[int]:
    """A process and its children (a prefork worker and its pool)."""
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        pids += [int(p) for p in task.read_text().split()]
    return pids


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by a process and its children."""
    total = 0
    for p in _family(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    """The largest VmHWM (peak resident set) of a process and its children, in MB."""
    peaks = []
    for p in _family(pid):
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
        peaks.append(int(line.split()[1]) / 1024)
    return max(peaks)


def _timed_run(
    preset: str,
    server: FakeOpenAI,
    bot: ResponderServer,
    worker: int,
    tmp_path: Path,
    *,
    latency: float = LATENCY,
) -> None:
    """One run; its figures are recorded (at another latency than LATENCY: the overhead only,
    as a figure with no target that shows how the lab's fixed cost weighs less)."""
    server.latency = bot.latency = latency
    cpu = _cpu_seconds(worker)
    started, began = time.perf_counter(), timezone.now()
    _, report = qalab_run(
        "--org", "demo", "--preset", preset, "--seed", "13", "--responder", bot.url,
        "--as-of", AS_OF.isoformat(),
        "--wait", "--timeout", "600", tmp_path=tmp_path,
    )  # fmt: skip
    wall, ended = time.perf_counter() - started, timezone.now()
    cpu = _cpu_seconds(worker) - cpu
    assert report["status"] == "done", report["error"]
    run = Run.objects.get(id=report["run_id"])
    chain = dependent_chain(run)
    bound = sum(chain.values()) * latency
    tokens = report["tokens"]
    print(
        f"\n{preset} at {latency * 1000:.0f} ms: wall {wall:.2f} s, chain {chain} = {sum(chain.values())} calls "
        f"→ bound {bound:.2f} s; {tokens['requests']} requests, bot {len(bot.requests)}; "
        f"tokens {tokens['used']:,}/{tokens['budget']:,}; verdict {report['verdict']}\n"
        f"  timeline: {timeline(run, began, ended)}; worker CPU {cpu:.2f} s"
    )
    assert tokens["fallbacks"] == 0 and tokens["denied"] == 0
    note = f"wall / dependent chain × {latency * 1000:.0f} ms ({wall:.1f} s / {bound:.1f} s)"
    if latency != LATENCY:
        record(f"overhead_{preset}_at_{latency * 1000:.0f}ms", round(wall / bound, 3), note=note)
        return
    record(f"overhead_{preset}", round(wall / bound, 3), target=1.15, note=note)
    record(
        f"overhead_{preset}_chain",
        {**chain, "wall_s": round(wall, 2), "bound_s": bound, "worker_cpu_s": round(cpu, 2)},
        note="dependent calls by stage; the worker's CPU seconds during the run",
    )
    record(
        f"tokens_{preset}",
        round(tokens["used"] / tokens["budget"], 3),
        target=0.75,
        note=f"used / budget ({tokens['used']:,} / {tokens['budget']:,})",
    )
    record(f"tokens_{preset}_by_role", tokens["by_role"])


def test_quick_and_regression_against_latency(tmp_path: Path) -> None:
    import_demo_org()
    scenarios = SIZES["regression"][0]
    brains = {
        p: realistic_brain(seed=13, scenarios=s, max_turns=t, start=AS_OF)
        for p, (s, t) in SIZES.items()
    }
    preset = {"now": "quick"}

    def brain(body: dict[str, Any]) -> Any:
        return brains[preset["now"]](body)

    settings = {"QALAB_RUN_MAX_CONCURRENT_CASES": ALL_AT_ONCE, "QALAB_LLM_CONCURRENCY": ALL_AT_ONCE}
    with (
        FakeOpenAI(seed=13, brain=brain, latency=LATENCY) as server,
        ResponderServer(latency=LATENCY, reply=bot_reply) as bot,
        openai_settings(server, QALAB_LLM_MAX_FALLBACK_SHARE=0.2, **settings),
    ):
        env = _llm_env(server, **{k: str(v) for k, v in settings.items()})
        env["QALAB_LLM_MAX_FALLBACK_SHARE"] = "0.2"
        with run_celery_worker(concurrency=scenarios, env=env) as worker:
            for name in SIZES:
                preset["now"] = name
                _timed_run(name, server, bot, worker.pid, tmp_path)
            preset["now"] = "quick"
            _timed_run("quick", server, bot, worker.pid, tmp_path, latency=1.0)
            rss = _peak_rss_mb(worker.pid)
    record(
        "worker_rss_mb",
        round(rss, 1),
        target=400,  # issue 32: with the semantic layer's encoder loaded
        note=f"peak RSS of one worker process (prefork, {scenarios} processes, both runs)",
    )
    print(f"worker peak RSS: {rss:.0f} MB (pid {worker.pid}, {os.cpu_count()} cpus)")
