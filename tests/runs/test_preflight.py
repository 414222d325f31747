"""Preflight: a dead or foreign bot stops the run before a single token is spent."""

from __future__ import annotations

import socket

import pytest

from runs.models import LlmCall, Run, RunStatus
from tests.responder_server import ResponderServer
from tests.runs.helpers import qalab_run

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _assert_stopped_before_spending(report: dict) -> Run:
    assert report["status"] == RunStatus.ERROR
    assert report["verdict"] is None
    assert report["error"].startswith("responder preflight failed, nothing generated and no")
    assert report["tokens"]["used"] == 0 and report["cases"] == []
    run = Run.objects.get(id=report["run_id"])
    assert not LlmCall.objects.filter(run=run).exists() and not run.artifacts.exists()
    assert run.locked_at is not None
    return run


def test_a_dead_responder_fails_in_preflight_with_no_tokens_spent(demo_org, tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/chat"
    code, report = qalab_run("--org", "demo", "--inline", "--responder", url, tmp_path=tmp_path)
    assert code == 4
    _assert_stopped_before_spending(report)
    assert f"{url} could not connect" in report["error"]
    assert "Check that the bot is running" in report["error"]


def test_a_bot_of_another_contract_fails_in_preflight(demo_org, tmp_path):
    spec = "python:tests.responders:other_contract"
    code, report = qalab_run("--org", "demo", "--inline", "--responder", spec, tmp_path=tmp_path)
    assert code == 4
    _assert_stopped_before_spending(report)
    assert "outside the contract" in report["error"] and "reply" in report["error"]


def test_a_python_responder_that_exits_fails_in_preflight_not_the_process(demo_org, tmp_path):
    code, report = qalab_run(
        "--org", "demo", "--inline", "--responder", "python:sys:exit", tmp_path=tmp_path
    )
    assert code == 4
    _assert_stopped_before_spending(report)
    assert "SystemExit" in report["error"]


def test_a_live_bot_is_greeted_once_in_a_session_of_its_own(demo_org, tmp_path):
    with ResponderServer() as bot:
        code, report = qalab_run(
            "--org", "demo", "--inline", "--scenarios", "1", "--responder", bot.url,
            tmp_path=tmp_path,
        )  # fmt: skip
    assert code in (0, 1), report["error"]
    first = bot.requests[0]
    assert first["session_id"] == f"qalab-{report['run_id']}-preflight"
    assert [m["content"] for m in first["messages"]] == ["Hello"] and first["kb"] == []
    assert sum(r["session_id"].endswith("-preflight") for r in bot.requests) == 1
    preflight = report["source"]["preflight"]
    assert preflight["reply"].startswith("Turn 0: noted 'Hello'")
    assert preflight["latency_ms"] >= 0


def test_the_labs_own_responders_need_no_preflight(demo_org, tmp_path):
    code, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "1", "--responder", "reference",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert code in (0, 1) and "preflight" not in report["source"]
