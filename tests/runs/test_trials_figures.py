"""The trials figures on small worked examples (runs.report.trials, judge.significance
over_trials), computed by hand: pass rate, pass^k, pass@k, flaky scenarios and flaky issues,
with errored and unplayed trials."""

from __future__ import annotations

from typing import Any

import pytest

from judge.significance import Outcome, over_trials
from runs.models import RunCase, case_key
from runs.report.schema import Case, FindingGroup, Scores
from runs.report.trials import (
    flaky_text,
    scenario_trials,
    trials_line,
    trials_summary,
    with_trials,
)
from runs.report.words import share_pct

NO_SCORES = Scores(
    groundedness=None, extraction_accuracy=None, conversation_quality=None, overall=None
)


def _case(scenario: str, trial: int, status: str = "done", passed: bool | None = True) -> Case:
    return Case.model_validate(
        {
            "id": case_key(scenario, trial),
            "scenario_key": scenario,
            "trial": trial,
            "scenario": "booking",
            "fixture": "fx-01",
            "noise_level": None,
            "fixture_metrics": {},
            "session_id": "s",
            "status": status,
            "error": None,
            "expected_status": "COMPLETE",
            "actual_status": None,
            "turns": [],
            "attempts": 1,
            "interruptions": [],
            "scores": NO_SCORES,
            "pass": passed,
            "unsupported_by_rule": {},
        }
    )


def _group(fingerprint: str, cases: list[str]) -> FindingGroup:
    return FindingGroup(
        fingerprint=fingerprint,
        rule_id="invented_price",
        severity="critical",
        subject="19 EUR",
        count=len(cases),
        cases=cases,
        finding_ids=list(range(len(cases))),
    )


# Three scenarios, three trials each:
#   sc-01 passes 3 of 3; sc-02 passes 1 of 3 (flaky); sc-03 trial 2 errored, trial 3 was
#   skipped for the budget, trial 1 passed: 1 of 2 judged, flaky, pass^3 False, pass@3 True.
CASES = [
    _case("sc-01", 1),
    _case("sc-01", 2),
    _case("sc-01", 3),
    _case("sc-02", 1, passed=False),
    _case("sc-02", 2),
    _case("sc-02", 3, passed=False),
    _case("sc-03", 1),
    _case("sc-03", 2, status="error", passed=None),
    _case("sc-03", 3, status="skipped_budget", passed=None),
]


def test_each_scenario_over_its_trials() -> None:
    by_key = {s.scenario_key: s for s in scenario_trials(CASES, 3)}
    one, two, three = by_key["sc-01"], by_key["sc-02"], by_key["sc-03"]
    assert (one.played, one.passed, one.pass_rate, one.pass_all, one.pass_any, one.flaky) == (
        3, 3, 1.0, True, True, False,
    )  # fmt: skip
    assert (two.played, two.passed, two.pass_rate, two.pass_all, two.pass_any, two.flaky) == (
        3, 1, 0.3333, False, True, True,
    )  # fmt: skip
    assert (three.played, three.passed, three.pass_all, three.pass_any, three.flaky) == (
        2, 1, False, True, True,
    )  # fmt: skip
    assert three.cases == ["sc-03", "sc-03.t2", "sc-03.t3"]


def test_a_scenario_missing_a_trial_has_no_pass_hat_k_until_one_fails() -> None:
    cases = [_case("sc-01", 1), _case("sc-01", 2, status="skipped_budget", passed=None)]
    (only,) = scenario_trials(cases, 2)
    assert only.pass_all is None and only.pass_any is True
    cases = [_case("sc-01", 1, passed=False), _case("sc-01", 2, status="cancelled", passed=None)]
    (only,) = scenario_trials(cases, 2)
    assert only.pass_all is False and only.pass_any is None


def test_the_runs_figures_and_the_flaky_issues() -> None:
    groups = with_trials(
        [
            _group("a", ["sc-02.t2"]),  # one of sc-02's three trials: flaky
            _group("b", ["sc-01", "sc-01.t2", "sc-01.t3"]),  # every trial of sc-01: steady
            _group("c", ["sc-03", "sc-03.t2"]),  # both judged trials of sc-03: steady
            _group("d", []),  # run-wide
        ],
        CASES,
        3,
    )
    assert [g.trials and g.trials.model_dump() for g in groups] == [
        {"seen": 1, "played": 3, "flaky": True},
        {"seen": 3, "played": 3, "flaky": False},
        {"seen": 2, "played": 2, "flaky": False},
        None,
    ]
    assert flaky_text(groups[0]) == "flaky: found in 1 of 3 trials"
    assert flaky_text(groups[1]) == ""
    trials = trials_summary(CASES, groups, 3)
    assert trials is not None
    # 8 judged trials (sc-03.t3 was not played), 5 passed.
    assert (trials.played, trials.passed, trials.pass_rate) == (8, 5, 0.625)
    # pass^3: sc-01 only, of three scenarios; pass@3: all three.
    assert (trials.pass_hat_k, trials.pass_at_k) == (0.3333, 1.0)
    assert (trials.flaky_scenarios, trials.flaky_issues) == (2, 1)
    assert trials_line(trials) == (
        "pass rate 5 of 8 trials (62%) · pass^3 33% · pass@3 100% · 2 flaky scenarios, "
        "1 flaky issue"
    )


def test_one_trial_adds_nothing() -> None:
    cases = [_case("sc-01", 1), _case("sc-02", 1, passed=False)]
    groups = [_group("a", ["sc-02"])]
    assert trials_summary(cases, groups, 1) is None
    assert with_trials(groups, cases, 1) == groups and groups[0].trials is None


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "n/a"), (0.0, "0%"), (0.001, "1%"), (0.5, "50%"), (0.996, "99%"), (1.0, "100%")],
)
def test_a_share_never_rounds_to_all_or_none(value: float | None, text: str) -> None:
    assert share_pct(value) == text


def test_the_delta_reads_a_scenario_over_its_trials() -> None:
    assert over_trials([Outcome(0.9, True), Outcome(0.5, False), Outcome(0.7, True)]) == Outcome(
        score=pytest.approx(0.7), passed=False
    )
    assert over_trials([Outcome(0.8, True), Outcome(None, None)]) == Outcome(0.8, True)
    assert over_trials([Outcome(None, None)]) == Outcome(None, None)
    assert over_trials([Outcome(0.4, False)]) == Outcome(0.4, False)  # one trial: itself


@pytest.mark.parametrize(
    ("key", "found"),
    [("sc-01", ("sc-01", 1)), ("sc-01.t2", ("sc-01", 2)), ("sc-01.t12", ("sc-01", 12))],
)
@pytest.mark.django_db
def test_a_case_is_found_by_its_key(key: str, found: tuple[str, int], demo_org: Any) -> None:
    from tests.factories import bare_run

    run = bare_run(demo_org)
    for trial in (1, 2, 12):
        RunCase.objects.create(
            run=run, scenario_key="sc-01", trial=trial, scenario_type="booking",
            fixture_key="fx-01", expected_status="COMPLETE",
        )  # fmt: skip
    case = run.cases.with_key(key).get()
    assert (case.scenario_key, case.trial) == found and case.key == key
    assert case.session_id == f"qalab-{run.id}-{key}"
    assert not run.cases.with_key("sc-01.t1").exists()  # trial 1's key is the scenario's
    assert not run.cases.with_key("sc-01.t3").exists()
