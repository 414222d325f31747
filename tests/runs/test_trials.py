"""Trials (issue 34, point 3): `--trials K` plays every scenario K times with the same customer
plan, one case per trial. A bot that fails one scenario in one of three trials: the pass rate,
pass^3, pass@3 and the flaky mark are right in every format, and the case list shows the
trials."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from runs.models import Run, RunCase
from runs.report import report_to_markdown
from runs.report.build import report_build
from runs.report.junit import report_to_junit
from runs.report.step_summary import report_to_step_summary
from tests import responders
from tests.runs.helpers import AS_OF, qalab_run

BOT = "python:tests.responders:switchable"
ARGS = ("--org", "demo", "--inline", "--seed", "31", "--as-of", AS_OF.isoformat())
SCENARIOS = 4


@pytest.fixture
def spoiled():
    yield responders.SPOILED
    responders.SPOILED.clear()


def _customer_messages(case: dict[str, Any]) -> list[str]:
    return [t["customer"] for t in case["turns"]]


@pytest.fixture
def flaky_run(
    demo_org: Any, tmp_path: Path, spoiled: set[str], capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], str]:
    """Three trials of four scenarios; the bot invents a price in the second trial of one
    scenario that passes otherwise (picked from a one-trial run of the same test set)."""
    _, once = qalab_run(*ARGS, "--scenarios", str(SCENARIOS), "--responder", BOT, tmp_path=tmp_path)
    passing = sorted(c["id"] for c in once["cases"] if c["pass"])
    assert passing, once["cases"]
    target = passing[0]
    spoiled.add(f"{target}.t2")  # the bot's session of that scenario's second trial
    code, report = qalab_run(
        *ARGS, "--scenarios", str(SCENARIOS), "--responder", BOT, "--trials", "3",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert code == 1, report["verdict_reason"]  # a critical in one trial fails the gate
    # The CLI summary says it too.
    trials = report["trials"]
    assert (
        f"  trials: pass rate {trials['passed']} of {SCENARIOS * 3} trials"
        in capsys.readouterr().out
    )
    return report, target


def test_every_scenario_is_played_three_times_with_the_same_customer_plan(
    flaky_run: tuple[dict[str, Any], str],
) -> None:
    report, target = flaky_run
    cases = report["cases"]
    assert len(cases) == SCENARIOS * 3
    keys = [c["id"] for c in cases]
    scenarios = sorted({c["scenario_key"] for c in cases})
    assert keys == [k for s in scenarios for k in (s, f"{s}.t2", f"{s}.t3")]
    for scenario in scenarios:
        trials = [c for c in cases if c["scenario_key"] == scenario]
        assert [c["trial"] for c in trials] == [1, 2, 3]
        # The same customer opens every trial; each trial has its own session with the bot.
        assert len({_customer_messages(c)[0] for c in trials}) == 1
        assert len({c["session_id"] for c in trials}) == 3
        if scenario != target:  # the bot is deterministic elsewhere: identical conversations
            assert len({tuple(_customer_messages(c)) for c in trials}) == 1
    # The budgets scale with the trials (no --budget given).
    assert report["tokens"]["budget"] == 3 * 50_000
    assert report["tokens"]["responder_budget"] == 3 * 50_000
    assert report["config"]["trials"] == 3
    assert RunCase.objects.filter(run_id=report["run_id"]).count() == SCENARIOS * 3


def test_pass_rate_pass_hat_k_and_the_flaky_mark_in_the_json(
    flaky_run: tuple[dict[str, Any], str],
) -> None:
    report, target = flaky_run
    trials = report["trials"]
    by_key = {s["scenario_key"]: s for s in trials["scenarios"]}
    assert trials["k"] == 3
    flaky = by_key[target]
    assert flaky["cases"] == [target, f"{target}.t2", f"{target}.t3"]
    assert (flaky["played"], flaky["passed"], flaky["pass_rate"]) == (3, 2, 0.6667)
    assert flaky["pass_all"] is False and flaky["pass_any"] is True and flaky["flaky"] is True
    # The run's figures, computed here from the cases themselves.
    outcomes: dict[str, list[bool]] = {}
    for case in report["cases"]:
        outcomes.setdefault(case["scenario_key"], []).append(bool(case["pass"]))
    assert trials["played"] == SCENARIOS * 3
    assert trials["passed"] == sum(sum(v) for v in outcomes.values())
    assert trials["pass_rate"] == round(trials["passed"] / trials["played"], 4)
    assert trials["pass_hat_k"] == round(sum(all(v) for v in outcomes.values()) / SCENARIOS, 4)
    assert trials["pass_at_k"] == round(sum(any(v) for v in outcomes.values()) / SCENARIOS, 4)
    assert trials["flaky_scenarios"] == sum(1 for v in outcomes.values() if any(v) and not all(v))
    # The invented price: found in one trial of three, so flaky; issues found in every trial of
    # their scenarios are not.
    spoiled_case = f"{target}.t2"
    price = [g for g in report["finding_groups"] if g["cases"] == [spoiled_case]]
    assert price and all(g["trials"] == {"seen": 1, "played": 3, "flaky": True} for g in price)
    steady = [
        g
        for g in report["finding_groups"]
        if g["trials"] and g["trials"]["seen"] == g["trials"]["played"]
    ]
    assert all(not g["trials"]["flaky"] for g in steady)
    assert trials["flaky_issues"] == sum(
        1 for g in report["finding_groups"] if g["trials"] and g["trials"]["flaky"]
    )
    assert report["verdict"] == "FAIL_CRITICAL"


def test_markdown_junit_and_page_show_the_trials(
    flaky_run: tuple[dict[str, Any], str], admin_client: Any
) -> None:
    report, target = flaky_run
    run = Run.objects.get(id=report["run_id"])
    built = report_build(run=run)
    trials = report["trials"]

    step = report_to_step_summary(built)
    assert f"Trials: 3 per scenario · pass rate {trials['passed']} of 12 trials" in step

    markdown = report_to_markdown(built)
    assert "## Trials: 3 per scenario" in markdown
    assert f"pass^3 {trials['pass_hat_k']:.0%}" in markdown
    assert f"| {target} | 2 of 3 | no | yes | flaky |" in markdown
    assert "flaky: found in 1 of 3 trials" in markdown
    fixtures = markdown.split("## Fixtures")[1].split("## Tokens")[0]
    assert fixtures.count("| fx-") == SCENARIOS  # each fixture once, not once per trial

    junit = ElementTree.fromstring(report_to_junit(built))
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["trials"] == "3"
    assert props["pass_hat_k"] == str(trials["pass_hat_k"])
    assert props["pass_at_k"] == str(trials["pass_at_k"])
    names = [t.get("name") for t in junit.iter("testcase")]
    assert any(n.startswith(f"{target}.t2 (") and "trial 2 of 3" in n for n in names)
    failed = next(t for t in junit.iter("testcase") if t.get("name").startswith(f"{target}.t2 "))
    assert "flaky: found in 1 of 3 trials" in failed.find("failure").text

    page = admin_client.get(f"/admin/runs/run/{run.id}/report/").content.decode()
    assert "Trials" in page and "pass^3" in page
    assert f"{target}.t2" in page and "flaky" in page
    assert '<input type="hidden" name="trials" value="3">' in page  # re-run keeps the trials
    case = admin_client.get(f"/admin/runs/run/{run.id}/cases/{target}.t2/")
    assert case.status_code == 200 and "trial 2 of 3" in case.content.decode()


def test_one_trial_is_the_run_it_always_was(demo_org: Any, tmp_path: Path) -> None:
    _, report = qalab_run(*ARGS, "--scenarios", "2", "--responder", BOT, tmp_path=tmp_path)
    assert report["trials"] is None and "trials" not in report["config"]
    assert [c["trial"] for c in report["cases"]] == [1, 1]
    assert [c["id"] for c in report["cases"]] == [c["scenario_key"] for c in report["cases"]]
    assert all(g["trials"] is None for g in report["finding_groups"])
    assert "Trials" not in report_to_markdown(
        report_build(run=Run.objects.get(id=report["run_id"]))
    )


def test_an_explicit_budget_is_not_scaled(demo_org: Any, tmp_path: Path) -> None:
    _, report = qalab_run(
        *ARGS, "--scenarios", "1", "--trials", "2", "--budget", "70000",
        "--responder-budget", "9000", "--responder", BOT, tmp_path=tmp_path,
    )  # fmt: skip
    assert report["tokens"]["budget"] == 70_000
    assert report["tokens"]["responder_budget"] == 9_000
    assert [c["id"] for c in report["cases"]] == ["sc-01", "sc-01.t2"]


@pytest.mark.parametrize("trials", ["0", "21", "x"])
def test_a_bad_trial_count_is_a_usage_error(demo_org: Any, tmp_path: Path, trials: str) -> None:
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises((CommandError, SystemExit)):
        call_command("qalab_run", *ARGS, "--trials", trials)
    assert not Run.objects.exists()


def test_the_start_form_takes_trials_and_says_the_budgets_scale(
    admin_client: Any, demo_org: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.urls import reverse

    page = admin_client.get(reverse("admin:runs_run_start")).content.decode()
    assert 'name="trials"' in page and "Both token budgets are multiplied by the trials" in page
    with django_capture_on_commit_callbacks(execute=False):
        response = admin_client.post(
            reverse("admin:runs_run_start"),
            {"organization": demo_org.pk, "preset": "regression", "trials": "2"},
        )
    run = Run.objects.get()
    assert response.status_code == 302
    assert run.trials == 2 and run.config["trials"] == 2
    assert run.token_budget == 2 * 100_000 and run.responder_token_budget == 2 * 100_000
    refused = admin_client.post(
        reverse("admin:runs_run_start"),
        {"organization": demo_org.pk, "preset": "quick", "trials": "21"},
    )
    assert refused.status_code == 200 and b"errorlist" in refused.content
    assert Run.objects.count() == 1
