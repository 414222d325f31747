"""Runs fit their budget on a real model (issue 19): a default Quick run on the openai engine,
against the local server billing realistic replies, ends with the lab's roles within 75% of its
budget (the bot's own tokens are metered apart, issue 34); the judge's
share of the budget is held from generation and simulation, and the report says so."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from qalab.llm import BudgetExceeded
from runs.budget import JUDGE_SHARE, DbLedger
from runs.models import Run
from runs.report.build import report_build, run_tokens
from runs.report.markdown import report_to_markdown
from tests.llm_server import FakeOpenAI
from tests.runs.helpers import AS_OF, generate_only, qalab_run
from tests.runs.realistic_brain import format_table, realistic_brain, token_table
from tests.runs.test_openai_pipeline import openai_settings

SIZES = {"quick": (12, 4), "regression": (24, 5)}


def _measure(preset: str, seed: int, tmp_path: Path, budget: str = "") -> dict[str, Any]:
    scenarios, turns = SIZES[preset]
    brain = realistic_brain(seed=seed, scenarios=scenarios, max_turns=turns, start=AS_OF)
    args = ["--org", "demo", "--inline", "--preset", preset, "--seed", str(seed)]
    args += ["--as-of", AS_OF.isoformat()]
    with FakeOpenAI(seed=seed, brain=brain) as server, openai_settings(server):
        _, report = qalab_run(*args, *(["--budget", budget] if budget else []), tmp_path=tmp_path)
    run = Run.objects.get(id=report["run_id"])
    print(
        f"\n{preset}: verdict {report['verdict']}, status {report['status']}, used "
        f"{run.tokens_used:,} of {run.token_budget:,}\n{format_table(token_table(run.id))}"
    )
    return report


def test_a_default_quick_run_on_a_real_model_fits_its_budget_with_headroom(
    demo_org: Any, tmp_path: Path
) -> None:
    report = _measure("quick", 13, tmp_path)
    tokens = report["tokens"]
    assert report["status"] == "done", report["error"]
    assert report["verdict"] != "BUDGET_STOPPED"
    assert tokens["denied"] == 0 and tokens["fallbacks"] == 0
    assert tokens["by_role"]["judge"] > 0  # every case reviewed, top actions phrased
    # The lab's roles within 75% of the design's 50,000 (issue 34); the reference bot, which
    # the lab runs on the model here, spends its own budget, apart.
    assert tokens["budget"] == 50_000
    assert tokens["used"] <= 0.75 * tokens["budget"]
    assert tokens["used"] == sum(n for r, n in tokens["by_role"].items() if r != "responder")
    assert 0 < tokens["responder_used"] == tokens["by_role"]["responder"]
    assert tokens["responder_used"] <= tokens["responder_budget"] == 50_000
    assert tokens["judge_held"] == int(tokens["budget"] * JUDGE_SHARE)


@pytest.mark.skipif(not os.environ.get("QALAB_MEASURE"), reason="QALAB_MEASURE=<preset>[:budget]")
def test_measure(demo_org: Any, tmp_path: Path) -> None:
    """Prints the ledger by role and stage of one run (make-free measurement, issue 19)."""
    preset, _, budget = os.environ["QALAB_MEASURE"].partition(":")
    _measure(preset, 13, tmp_path, budget=budget)


def _openai_run(demo_org: Any, budget: int) -> Run:
    run = generate_only(demo_org, scenarios=1)
    Run.objects.filter(id=run.id).update(
        engine="openai", token_budget=budget, tokens_used=0, tokens_reserved=0
    )
    return Run.objects.get(id=run.id)


def test_generation_and_simulation_cannot_spend_the_judges_share(demo_org: Any) -> None:
    run = _openai_run(demo_org, 10_000)
    ledger = DbLedger(run_id=run.id)
    assert ledger.held() == 3_000
    ledger.reserve(role="generator", purpose="g", tokens=4_000)
    ledger.reserve(role="simulator", purpose="s0", tokens=3_000)
    with pytest.raises(BudgetExceeded, match="3000 held for the judge"):
        ledger.reserve(role="simulator", purpose="s", tokens=1)
    run.refresh_from_db()
    assert run.budget_exhausted  # the run will end budget_stopped
    # The held share is the judge's when simulation has ended, despite the other stages' stop.
    ledger.reserve(role="judge", purpose="judge:sc-01", tokens=2_000)
    ledger.reserve(role="judge", purpose="judge:actions", tokens=1_000)
    with pytest.raises(BudgetExceeded):
        ledger.reserve(role="judge", purpose="judge:more", tokens=1)
    run.refresh_from_db()
    assert run.tokens_reserved == 10_000  # never above the budget


def test_an_offline_run_holds_nothing(demo_org: Any) -> None:
    run = generate_only(demo_org, scenarios=1)
    assert run.engine == "offline"
    assert DbLedger(run_id=run.id).held() == 0
    assert run_tokens(run).judge_held == 0


def test_the_report_states_the_judges_share(demo_org: Any) -> None:
    run = _openai_run(demo_org, 50_000)
    tokens = run_tokens(run)
    assert (tokens.judge_held, tokens.judge_share) == (15_000, JUDGE_SHARE)
    markdown = report_to_markdown(report_build(run=run, include_delta=False))
    assert "15,000 tokens (30% of the budget) were held for the judge stage" in markdown
