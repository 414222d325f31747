"""`qalab_run --inline --timeout S` is honoured (issue 33): at the deadline the run ends as a
timeout (status error, a message naming --timeout, exit 4), the case talking stops at its next
step, the cases left are never played, no reservation stays open and the run is locked. The
bounds are generous: the bot takes 1.5 s per reply, the whole run would take over 20 s."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from qalab.models import Organization
from runs.models import CaseStatus, Run, RunStatus
from tests.responder_server import ResponderServer
from tests.runs.helpers import qalab_run

LATENCY_S = 1.5


@pytest.fixture
def org(transactional_db: Any) -> Organization:
    # Committed rows: the timer thread that ends the run reads them on its own connection.
    from tests.factories import import_demo_org

    return import_demo_org()


def test_an_inline_run_past_its_timeout_ends_as_a_timeout(
    org: Organization, tmp_path: Path
) -> None:
    with ResponderServer(latency=LATENCY_S) as bot:
        started = time.monotonic()
        code, report = qalab_run(
            "--org", "demo", "--inline", "--scenarios", "4", "--max-turns", "4", "--seed", "5",
            "--responder", bot.url, "--timeout", "3", tmp_path=tmp_path,
        )  # fmt: skip
        elapsed = time.monotonic() - started
        asked = len(bot.requests)
        time.sleep(LATENCY_S)
        assert len(bot.requests) == asked  # nothing talks to the bot after the command returns
    assert code == 4
    assert asked < 4 * 4  # the case talking at the deadline stopped before its next turn
    assert report["status"] == RunStatus.ERROR and report["verdict"] is None
    assert "--timeout 3 s" in report["error"]
    # The deadline, plus at most the reply in flight and the steps around it; far less than
    # the 4 cases x 4 turns x 1.5 s the run would take.
    assert 3 <= elapsed < 15, elapsed
    run = Run.objects.get(id=report["run_id"])
    assert run.locked_at is not None and run.tokens_reserved == 0
    statuses = list(run.cases.values_list("status", flat=True))
    assert CaseStatus.RUNNING not in statuses and CaseStatus.QUEUED not in statuses
    assert statuses.count(CaseStatus.DONE) < len(statuses)


def test_an_inline_run_within_its_timeout_is_untouched(org: Organization, tmp_path: Path) -> None:
    code, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "1", "--seed", "5", "--timeout", "600",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert report["status"] == RunStatus.DONE and code in (0, 1)
    assert report["error"] is None
