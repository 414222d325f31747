"""The bot's own budget (issue 34, point 1): when the lab runs the bot (`openai-chat:`), the
bot's tokens are metered against their own budget, apart from the lab's roles' preset budget,
shown apart in every format, and the run ends BUDGET_STOPPED when either one runs out."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from qalab.llm import BudgetExceeded
from runs import services
from runs.budget import DbLedger
from runs.models import LlmCall, Run
from runs.presets import PRESETS
from tests.runs.helpers import generate_only, qalab_run
from tests.runs.test_openai_chat import BOT, BillingOpenAI, _bot_brain, _good_tail
from tests.runs.test_openai_pipeline import openai_settings

SPEC = f"openai-chat:{BOT}?prompt=text:You are the front desk.&kb=none"


def _run(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], BillingOpenAI, Path]:
    junit = tmp_path / "junit.xml"
    args = ["--org", "demo", "--inline", "--seed", "31", "--responder", SPEC]
    with BillingOpenAI(seed=31, brain=_bot_brain(_good_tail)) as server, openai_settings(server):
        code, report = qalab_run(
            *args, "--junit", str(junit), "--md", str(tmp_path / "report.md"), *extra,
            tmp_path=tmp_path,
        )  # fmt: skip
    return code, report, server, junit


def _properties(junit: Path) -> dict[str, str]:
    root = ET.parse(junit).getroot()
    return {p.get("name", ""): p.get("value", "") for p in root.iter("property")}


def test_the_presets_are_the_designs() -> None:
    assert (PRESETS["quick"].scenarios, PRESETS["quick"].max_turns) == (12, 4)
    assert PRESETS["quick"].token_budget == 50_000
    assert (PRESETS["regression"].scenarios, PRESETS["regression"].max_turns) == (24, 5)
    assert PRESETS["regression"].token_budget == 100_000


def test_the_bots_budget_defaults_to_the_presets_and_is_snapshotted(demo_org: Any) -> None:
    run = services.run_create(organization=demo_org, preset="regression", seed=1)
    assert (run.token_budget, run.responder_token_budget) == (100_000, 100_000)
    assert run.config["responder_token_budget"] == 100_000
    # --budget is the lab's roles'; the bot keeps the preset's.
    run = services.run_create(organization=demo_org, budget=7_000, seed=1)
    assert (run.token_budget, run.responder_token_budget) == (7_000, 50_000)
    with override_settings(QALAB_RESPONDER_TOKEN_BUDGET=9_000):
        assert services.run_create(organization=demo_org, seed=1).responder_token_budget == 9_000
        run = services.run_create(organization=demo_org, responder_budget=3_000, seed=1)
    assert run.responder_token_budget == run.config["responder_token_budget"] == 3_000


def test_the_bots_calls_spend_their_own_budget_and_leave_the_judges_share(demo_org: Any) -> None:
    run = generate_only(demo_org, scenarios=1)
    Run.objects.filter(id=run.id).update(
        engine="openai", token_budget=10_000, tokens_used=0, responder_token_budget=2_000
    )
    ledger = DbLedger(run_id=run.id)
    ledger.reserve(role="responder", purpose="r1", tokens=1_500)
    ledger.reserve(role="generator", purpose="g", tokens=7_000)  # 3,000 held for the judge
    run.refresh_from_db()
    assert (run.tokens_reserved, run.responder_tokens_reserved) == (7_000, 1_500)
    with pytest.raises(BudgetExceeded, match="the bot's token budget"):
        ledger.reserve(role="responder", purpose="r2", tokens=501)
    run.refresh_from_db()
    assert run.budget_exhausted  # either budget running out stops the run
    assert run.responder_tokens_used + run.responder_tokens_reserved <= 2_000
    denied = LlmCall.objects.get(run_id=run.id, status="denied")
    assert denied.role == "responder"


def test_what_the_judge_spent_comes_out_of_its_held_share(demo_org: Any) -> None:
    run = generate_only(demo_org, scenarios=1)
    Run.objects.filter(id=run.id).update(engine="openai", token_budget=10_000, tokens_used=0)
    ledger = DbLedger(run_id=run.id)
    assert ledger.held() == 3_000
    review = ledger.reserve(role="judge", purpose="judge:sc-01", tokens=2_000)
    # 2,000 of the judge's 3,000 are spoken for: 1,000 still held from the other stages.
    ledger.reserve(role="simulator", purpose="s1", tokens=7_000)
    with pytest.raises(BudgetExceeded, match="3000 held for the judge"):
        ledger.reserve(role="simulator", purpose="s2", tokens=1)
    ledger.reserve(role="judge", purpose="judge:sc-02", tokens=1_000)
    run.refresh_from_db()
    assert run.tokens_reserved == 10_000
    assert review


def test_an_openai_chat_quick_shows_the_two_budgets_apart(demo_org: Any, tmp_path: Path) -> None:
    code, report, server, junit = _run(tmp_path)
    tokens = report["tokens"]
    assert report["status"] == "done" and report["verdict"] != "BUDGET_STOPPED", report["error"]
    assert code in (0, 1)
    assert (tokens["budget"], tokens["responder_budget"]) == (50_000, 50_000)
    assert tokens["responder_metered"] is True
    # The lab's roles and the bot, each what the server billed, each within its own budget.
    assert tokens["responder_used"] == server.billed[BOT] == tokens["by_role"]["responder"] > 0
    assert tokens["used"] == sum(n for m, n in server.billed.items() if m != BOT)
    assert tokens["used"] == sum(n for r, n in tokens["by_role"].items() if r != "responder")
    markdown = (tmp_path / "report.md").read_text()
    assert f"The lab's roles used {tokens['used']:,} of 50,000" in markdown
    assert f"used {tokens['responder_used']:,} of its own budget of 50,000" in markdown
    props = _properties(junit)
    assert props["tokens_used"] == str(tokens["used"]) and props["tokens_budget"] == "50000"
    assert props["responder_tokens_used"] == str(tokens["responder_used"])
    assert props["responder_tokens_budget"] == "50000"


def test_a_tiny_bot_budget_stops_the_run(demo_org: Any, tmp_path: Path) -> None:
    code, report, _, _ = _run(tmp_path, "--responder-budget", "3000")
    tokens = report["tokens"]
    assert report["status"] == "budget_stopped"
    assert code == (1 if report["summary"]["findings"]["critical"] else 3)
    assert tokens["responder_budget"] == 3_000 and tokens["responder_used"] <= 3_000
    assert tokens["budget"] == 50_000 and tokens["used"] < 50_000  # the lab's had room
    denied = LlmCall.objects.filter(run_id=report["run_id"], status="denied")
    assert {c.role for c in denied} == {"responder"}
    assert "skipped_budget" in {c["status"] for c in report["cases"]} or any(
        "token budget" in (c["error"] or "") for c in report["cases"]
    )


def test_a_tiny_lab_budget_stops_the_run(demo_org: Any, tmp_path: Path) -> None:
    code, report, _, _ = _run(tmp_path, "--budget", "12000")
    tokens = report["tokens"]
    assert report["status"] == "budget_stopped"
    assert code == (1 if report["summary"]["findings"]["critical"] else 3)
    assert tokens["budget"] == 12_000 and tokens["used"] <= 12_000
    assert tokens["responder_budget"] == 50_000 and tokens["responder_used"] < 50_000
    denied = LlmCall.objects.filter(run_id=report["run_id"], status="denied")
    assert denied.exists() and "responder" not in {c.role for c in denied}
