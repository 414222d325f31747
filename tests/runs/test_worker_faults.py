"""Real workers under faults, on the `openai` engine against the local test server.

A worker SIGKILLed mid-conversation loses nothing: another worker (with beat, so the reaper)
resumes the case after its last written turn, the run finishes, every report format says so,
and the tokens the run counts are exactly what the server billed. And secrets (the API key, the
bot's auth value, echoed back by the bot) never reach the database, a report, a log line or a
broker message.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Sum

from qalab.models import Organization
from qalab.redact import REDACTED
from runs import services
from runs.models import CaseStatus, LlmCall, Run, RunCase, RunStatus
from runs.report import report_to_markdown
from runs.report.build import report_build
from runs.tasks import CeleryDispatcher
from tests.conftest import run_celery_worker, worker_output
from tests.factories import import_demo_org
from tests.llm_server import FakeOpenAI
from tests.responder_server import ResponderServer
from tests.runs.helpers import qalab_run
from tests.runs.test_openai_pipeline import _llm_env, notes_brain, openai_settings

pytestmark = pytest.mark.django_db(transaction=True)


def _wait_for(check: Any, *, timeout: float, what: str, detail: Any = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    more = f"\n{detail()}" if detail else ""
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{more}")


def _state(run: Run, worker: Any) -> str:
    run.refresh_from_db()
    cases = list(run.cases.values_list("scenario_key", "status", "attempt", "lease_expires_at"))
    return f"run {run.status}: {cases}\n--- worker ---\n{worker_output(worker)[-6000:]}"


def _finish_on_a_second_worker(run: Run, *, env: dict[str, str], queue: str, beat: Path) -> None:
    """A worker with beat (so the reaper) on the same queue, until the run is locked."""
    with run_celery_worker(concurrency=2, env=env, beat=beat, queue=queue) as second:
        _wait_for(
            lambda: Run.objects.filter(id=run.id, locked_at__isnull=False).exists(),
            timeout=180,
            what="the second worker to finish the run",
            detail=lambda: _state(run, second),
        )


def test_a_worker_killed_mid_conversation_loses_nothing(client, django_user_model, tmp_path):
    import_demo_org()
    org = Organization.objects.get(slug="demo")
    with (
        FakeOpenAI(seed=4, brain=notes_brain) as llm,
        ResponderServer(hold=("sc-01", 1)) as bot,  # the bot holds sc-01's second reply
        openai_settings(llm),
    ):
        env = _llm_env(llm, QALAB_CASE_LEASE_SECONDS="10", QALAB_REAP_SECONDS="1")
        run = services.run_create(
            organization=org, responder_spec=bot.url, scenarios=3, max_turns=3, seed=12
        )
        # One process of the first worker plays one case at a time: while the bot is answering,
        # no LLM call of this run is in flight, so the kill leaves no half-billed call behind.
        queue = f"qalab-test-{uuid.uuid4().hex[:8]}"  # both workers serve the same queue
        with run_celery_worker(concurrency=1, env=env, queue=queue) as first:
            services.run_start(run=run, dispatcher=CeleryDispatcher())
            _wait_for(bot.holding.is_set, timeout=120, what="sc-01 to ask its second turn")
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
            bot.release.set()
        victim = RunCase.objects.get(run=run, scenario_key="sc-01")
        kept = victim.turns.count()
        assert victim.status == CaseStatus.RUNNING and kept >= 1
        _finish_on_a_second_worker(run, env=env, queue=queue, beat=tmp_path / "beat-schedule")
        billed = llm.usage_total

    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    for case in run.cases.all():
        indexes = list(case.turns.order_by("index").values_list("index", flat=True))
        assert indexes == list(range(len(indexes))) and indexes, case.scenario_key
    victim.refresh_from_db()
    assert victim.status == CaseStatus.DONE and victim.attempt == 2
    attempts = list(victim.turns.order_by("index").values_list("attempt", flat=True))
    assert attempts[:kept] == [1] * kept and set(attempts[kept:]) <= {2}

    report = report_build(run=run)
    exported = report.to_json()
    case = next(c for c in exported["cases"] if c["id"] == victim.scenario_key)
    assert case["attempts"] == 2
    assert [(i["attempt"], i["after_turn"]) for i in case["interruptions"]] == [(2, kept)]
    assert exported["summary"]["interrupted"] == 1
    assert (
        f"Interrupted: case {victim.scenario_key}: attempt 2 resumed after turn {kept}"
        in report_to_markdown(report)
    )
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "x")
    client.force_login(admin)
    page = client.get(f"/admin/runs/run/{run.id}/report/").content.decode()
    assert 'id="qa-interruptions"' in page
    assert f"case {victim.scenario_key}</a>: attempt 2 resumed after turn {kept}" in page

    # Tokens: what the run counts = its ledger = what the server billed; nothing left reserved.
    ledger = LlmCall.objects.filter(run=run).aggregate(n=Sum("actual"))["n"]
    assert exported["tokens"]["used"] == ledger == billed
    assert exported["tokens"]["reserved"] == 0 and exported["tokens"]["orphaned"] == 0
    # The bot heard every other turn once; only the one cut by the kill was asked again.
    asked = Counter(
        (b["session_id"], sum(m["role"] == "assistant" for m in b["messages"]))
        for b in bot.requests
    )
    assert [k for k, n in asked.items() if n > 1] == [(victim.session_id, kept)]


def test_a_worker_killed_while_the_bots_model_answers_leaves_nothing_reserved(tmp_path):
    """Issue 33, item 8: the whole worker group SIGKILLed while an `openai-chat:` bot's call
    holds a reservation. The case resumes on another worker and the run ends before the reaper
    would call that reservation orphaned (LLM timeout 60 s): the run is settled before it is
    locked, so nothing stays reserved and the run's used tokens are its ledger's sum."""
    import threading

    from tests.runs.test_openai_chat import BOT, PROMPT_FILE, _bot_brain, _good_tail

    import_demo_org()
    org = Organization.objects.get(slug="demo")
    holding, release = threading.Event(), threading.Event()
    answer = _bot_brain(_good_tail)

    def brain(body: dict) -> Any:
        if body.get("model") == BOT and not holding.is_set():
            holding.set()  # the first bot call waits until the worker is dead
            release.wait(60)
        return answer(body)

    with FakeOpenAI(seed=6, brain=brain) as llm, openai_settings(llm):
        env = _llm_env(
            llm,
            QALAB_CASE_LEASE_SECONDS="10",
            QALAB_REAP_SECONDS="1",
            QALAB_LLM_TIMEOUT_SECONDS="60",
        )
        spec = f"openai-chat:{BOT}?prompt=file:{PROMPT_FILE}&kb=retrieve:2"
        run = services.run_create(
            organization=org, responder_spec=spec, scenarios=2, max_turns=2, seed=14
        )
        queue = f"qalab-test-{uuid.uuid4().hex[:8]}"
        with run_celery_worker(concurrency=1, env=env, queue=queue) as first:
            services.run_start(run=run, dispatcher=CeleryDispatcher())
            _wait_for(holding.is_set, timeout=120, what="the bot's first call")
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        open_calls = LlmCall.objects.filter(run=run, role="responder", status="reserved")
        assert open_calls.count() == 1  # the killed call's reservation
        release.set()
        _finish_on_a_second_worker(run, env=env, queue=queue, beat=tmp_path / "beat-schedule")

    run.refresh_from_db()
    assert run.status in (RunStatus.DONE, RunStatus.BUDGET_STOPPED), run.error
    assert run.tokens_reserved == 0 and run.responder_tokens_reserved == 0
    ledger = LlmCall.objects.filter(run=run).aggregate(n=Sum("actual"))["n"]
    assert run.tokens_used + run.responder_tokens_used == ledger  # the lab's and the bot's
    assert not LlmCall.objects.filter(run=run, status="reserved").exists()
    [orphan] = LlmCall.objects.filter(run=run, status="orphaned")
    assert orphan.role == "responder" and orphan.actual == orphan.reserved > 0
    exported = report_build(run=run).to_json()
    tokens = exported["tokens"]
    assert tokens["reserved"] == 0 == tokens["responder_reserved"] and tokens["orphaned"] == 1
    assert tokens["used"] + tokens["responder_used"] == ledger


# --------------------------------------------------------------------------- secrets

API_KEY = "sk-canaryKEY7f3e9d2b41c8a605e1"
BOT_TOKEN = "bot-canaryTOK5a8c0e2f4d6b1397"


def _forms(secret: str) -> list[str]:
    """The secret as it could be written: raw, and base64 at each of the three alignments
    (Celery message bodies are base64)."""
    forms = [secret]
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + secret.encode()).decode()
        forms.append(encoded[4 * ((shift + 2) // 3) : -4])  # drop the bytes the shift touched
    return forms


def _leaks(text: str) -> list[str]:
    return [f for secret in (API_KEY, BOT_TOKEN) for f in _forms(secret) if f in text]


class BrokerTap:
    """`redis-cli monitor`: every command the broker receives, message bodies included."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> BrokerTap:
        host = settings.CELERY_BROKER_URL.split("//", 1)[1].split("/", 1)[0]
        name, _, port = host.partition(":")
        self._out = self.path.open("wb")
        self._proc = subprocess.Popen(
            ["redis-cli", "-h", name, "-p", port or "6379", "monitor"],
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )
        _wait_for(lambda: self.path.stat().st_size > 0, timeout=10, what="redis-cli monitor")
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)
        self._out.close()

    def text(self) -> str:
        return self.path.read_text(errors="replace")


def test_secrets_reach_no_row_report_log_or_broker_message(tmp_path, monkeypatch, capsys):
    if not _on_path("redis-cli"):
        pytest.skip("needs redis-cli (the broker tap)")
    import_demo_org()
    monkeypatch.setenv("QALAB_TEST_BOT_TOKEN", BOT_TOKEN)
    env = {"QALAB_RESPONDER_AUTH_ENV": "QALAB_TEST_BOT_TOKEN", "QALAB_TEST_BOT_TOKEN": BOT_TOKEN}
    with (
        FakeOpenAI(seed=5, brain=notes_brain) as llm,
        ResponderServer(echo_auth=True) as bot,
        openai_settings(
            llm, QALAB_LLM_API_KEY=API_KEY, QALAB_RESPONDER_AUTH_ENV="QALAB_TEST_BOT_TOKEN"
        ),
        BrokerTap(tmp_path / "broker.txt") as broker,
        run_celery_worker(
            concurrency=2, env=_llm_env(llm, QALAB_LLM_API_KEY=API_KEY, **env)
        ) as worker,
    ):
        md = tmp_path / "report.md"
        code, report = qalab_run(
            "--org", "demo", "--wait", "--timeout", "300", "--scenarios", "3", "--seed", "8",
            "--responder", bot.url, "--md", str(md), tmp_path=tmp_path,
        )  # fmt: skip
        logs = worker_output(worker)
    assert code in (0, 1), report["error"]
    # The secrets were really in play: the server got the key, the bot its token and echoed it.
    assert f"Bearer {API_KEY}" in {h.get("authorization") for h in llm.request_headers}
    assert all(BOT_TOKEN in h.get("Authorization", "") for h in bot.headers)
    assert any(BOT_TOKEN in r["reply"] for replies in bot.replies.values() for r in replies)

    dump = _pg_dump()
    assert "COPY public.qa_run_turns" in dump and REDACTED in dump  # the echo, redacted
    places = {
        "pg_dump": dump,
        "JSON report": json.dumps(report),
        "Markdown report": md.read_text(),
        "worker log": logs,
        "command output": "".join(capsys.readouterr()),
        "broker messages": broker.text(),
    }
    assert "runs.tasks.case_simulate_task" in places["broker messages"]  # the tap saw the tasks
    assert "ready." in logs and "chat/completions" in logs  # the log recorded the run's calls
    assert {where: _leaks(text) for where, text in places.items() if _leaks(text)} == {}


def _on_path(name: str) -> bool:
    from shutil import which

    return which(name) is not None


def _pg_dump() -> str:
    s = connection.settings_dict
    if s["ENGINE"] != "django.db.backends.postgresql" or not _on_path("pg_dump"):
        pytest.skip("needs the Postgres test database and pg_dump")
    out = subprocess.run(
        [
            "pg_dump",
            "-h",
            s.get("HOST") or "127.0.0.1",
            "-p",
            str(s.get("PORT") or 5432),
            "-U",
            s.get("USER") or "postgres",
            "--data-only",
            s["NAME"],
        ],
        capture_output=True,
        check=True,
        env={**os.environ, "PGPASSWORD": s.get("PASSWORD") or ""},
    )
    return out.stdout.decode(errors="replace")


def test_a_worker_told_to_stop_mid_conversation_stops_soon_and_the_next_resumes(tmp_path):
    """SIGTERM with the soft shutdown the demo and docker-compose configure: the worker waits
    QALAB_WORKER_STOP_SECONDS for its task, stops it, and the next worker on this host takes
    the case over at once (its lease, 300 s, is not waited out)."""
    import_demo_org()
    org = Organization.objects.get(slug="demo")
    env = {"REMAP_SIGTERM": "SIGQUIT", "QALAB_WORKER_STOP_SECONDS": "2"}
    with ResponderServer(hold=("sc-01", 1)) as bot:
        run = services.run_create(
            organization=org, responder_spec=bot.url, scenarios=2, max_turns=3, seed=12
        )
        queue = f"qalab-test-{uuid.uuid4().hex[:8]}"
        with run_celery_worker(concurrency=1, env=env, queue=queue) as first:
            services.run_start(run=run, dispatcher=CeleryDispatcher())
            _wait_for(bot.holding.is_set, timeout=120, what="sc-01 to ask its second turn")
            asked = time.monotonic()
            first.send_signal(signal.SIGTERM)
            first.wait(timeout=60)
            stopped_after = time.monotonic() - asked
        bot.release.set()
        assert stopped_after < 15  # it used to wait for the whole conversation
        with run_celery_worker(
            concurrency=2, env={**env, "QALAB_REAP_SECONDS": "1"}, queue=queue,
            beat=tmp_path / "beat-schedule",
        ) as second:  # fmt: skip
            _wait_for(
                lambda: Run.objects.filter(id=run.id, locked_at__isnull=False).exists(),
                timeout=90,
                what="the next worker to finish the run without waiting out the lease",
                detail=lambda: _state(run, second),
            )
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    victim = RunCase.objects.get(run=run, scenario_key="sc-01")
    assert victim.status == CaseStatus.DONE and victim.attempt == 2
    indexes = list(victim.turns.order_by("index").values_list("index", flat=True))
    assert indexes == list(range(len(indexes))) and len(indexes) >= 2
