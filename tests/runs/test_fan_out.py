"""A stage's independent LLM tasks run side by side (issue 19): the fixture items, manifest and
blueprints of generation, and the per-case reviews of judging, against the local
OpenAI-compatible server with latency; within QALAB_LLM_CONCURRENCY, and one at a time where
threads could not help (the offline engine) or could not see the rows (inside a transaction)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.test import override_settings

from qalab.fanout import serial
from qalab.llm import NullLedger, OfflineEngine
from runs.models import LlmCall
from runs.services.common import stage_fan_out
from tests.factories import import_demo_org
from tests.llm_server import FakeOpenAI
from tests.runs.helpers import qalab_run
from tests.runs.realistic_brain import realistic_brain
from tests.runs.test_openai_pipeline import MODELS, openai_settings


@pytest.mark.django_db(transaction=True)
def test_generation_items_and_case_reviews_run_side_by_side(tmp_path: Path) -> None:
    import_demo_org()
    brain = realistic_brain(seed=13, scenarios=12, max_turns=4, start=date.today())
    with (
        FakeOpenAI(seed=13, brain=brain, latency=0.2) as server,
        openai_settings(server, QALAB_LLM_CONCURRENCY=6, QALAB_LLM_MAX_FALLBACK_SHARE=0.2),
    ):
        code, report = qalab_run("--org", "demo", "--inline", "--seed", "13", tmp_path=tmp_path)
    assert report["status"] == "done", report["error"]
    assert report["tokens"]["fallbacks"] == 0 and report["tokens"]["denied"] == 0
    generation = server.most_at_once(MODELS["generator"])
    judging = server.most_at_once(MODELS["judge"])
    # 14 generation tasks and 12 reviews, 0.2 s each: up to 6 at once, never more (reviews may
    # add their confirmations, each case's in its own pool).
    assert 4 <= generation <= 6, generation
    assert judging >= 4, judging
    # Cases themselves are simulated one after another in --inline: one turn at a time.
    assert server.most_at_once(MODELS["simulator"]) == 1
    # Every task is metered once and settled: nothing left reserved by a thread.
    assert not LlmCall.objects.filter(run_id=report["run_id"], status="reserved").exists()
    assert report["tokens"]["used"] == server.usage_total


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


@pytest.mark.django_db(transaction=True)
def test_threads_only_for_a_remote_model_outside_a_transaction() -> None:
    remote: Any = _Named("openai")
    with override_settings(QALAB_LLM_CONCURRENCY=4):
        assert stage_fan_out(remote) is not serial
        assert stage_fan_out(OfflineEngine(ledger=NullLedger())) is serial
        with transaction.atomic():  # other threads could not see this transaction's rows
            assert stage_fan_out(remote) is serial
    with override_settings(QALAB_LLM_CONCURRENCY=1):
        assert stage_fan_out(remote) is serial
