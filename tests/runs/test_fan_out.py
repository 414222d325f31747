"""A stage's independent LLM tasks run side by side (issue 19): the fixture items, manifest and
blueprints of generation, and the per-case reviews the judge stage makes, against the local
OpenAI-compatible server with latency; within QALAB_LLM_CONCURRENCY, and one at a time where
threads could not help (the offline engine) or could not see the rows (inside a transaction).
A case is reviewed and checked by its own task as soon as its conversation ends."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django.db import transaction
from django.test import override_settings

from qalab.domain import ArtifactKind
from qalab.fanout import serial
from qalab.llm import NullLedger, OfflineEngine
from runs import services
from runs.inline import InlineDispatcher
from runs.models import LlmCall, Run, RunStatus
from runs.report.build import report_build
from runs.services.common import stage_fan_out
from tests.factories import import_demo_org
from tests.llm_server import FakeOpenAI
from tests.runs.helpers import AS_OF
from tests.runs.realistic_brain import realistic_brain
from tests.runs.test_openai_pipeline import MODELS, openai_settings


def _play_until_judging(run: Run, dispatcher: InlineDispatcher) -> None:
    services.run_start(run=run, dispatcher=dispatcher)
    while Run.objects.get(id=run.id).status != RunStatus.JUDGING:
        assert dispatcher.run_next() is not None


@pytest.mark.django_db(transaction=True)
def test_generation_items_and_case_reviews_run_side_by_side() -> None:
    org = import_demo_org()
    brain = realistic_brain(seed=13, scenarios=12, max_turns=4, start=AS_OF)
    with (
        FakeOpenAI(seed=13, brain=brain, latency=0.2) as server,
        openai_settings(server, QALAB_LLM_CONCURRENCY=6, QALAB_LLM_MAX_FALLBACK_SHARE=0.2),
    ):
        # Every review is made twice here (by its case, then again by the judge stage after the
        # test deletes them): twice the judge's spend of a Quick run's 50,000.
        run = services.run_create(
            organization=org, preset="quick", seed=13, as_of=AS_OF, budget=100_000
        )
        dispatcher = InlineDispatcher()
        _play_until_judging(run, dispatcher)
        # 14 generation tasks, 0.2 s each: up to 6 at once, never more.
        assert 4 <= server.most_at_once(MODELS["generator"]) <= 6
        # Each case was reviewed and checked by its own task as soon as it ended; in --inline
        # cases (and so their reviews) come one after another.
        kinds = Counter(run.artifacts.values_list("kind", flat=True))
        assert kinds[ArtifactKind.LLM_REVIEW] == kinds[ArtifactKind.CASE_CHECKS] == 12
        assert server.most_at_once(MODELS["simulator"]) == 1
        # Reviews the cases could not make are made by the judge stage, side by side.
        run.artifacts.filter(kind=ArtifactKind.LLM_REVIEW).delete()
        with server._lock:
            server.spans.clear()
        dispatcher.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    assert server.most_at_once(MODELS["judge"]) >= 4
    assert run.artifacts.filter(kind=ArtifactKind.LLM_REVIEW).count() == 12
    report = report_build(run=run, include_delta=False)
    assert report.tokens.fallbacks == 0 and report.tokens.denied == 0
    # Every task is metered once and settled: nothing left reserved by a thread.
    assert not LlmCall.objects.filter(run=run, status="reserved").exists()
    assert run.tokens_used + run.responder_tokens_used == server.usage_total  # lab + bot


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
