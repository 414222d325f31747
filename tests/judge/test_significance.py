"""Paired statistics for the delta (issue 34): checked against values worked out by hand."""

from __future__ import annotations

import pytest

from judge.significance import (
    ALPHA,
    Outcome,
    bootstrap_interval,
    mcnemar_exact,
    paired_change,
)


def test_the_exact_mcnemar_p_value_is_the_doubled_binomial_tail():
    # 6 flips, all pass -> fail: P(X <= 0 | n=6, p=1/2) = 1/64, two-sided 2/64.
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64) == pytest.approx(0.03125)
    # 3 to fail, 1 to pass: P(X <= 1 | n=4) = (1 + 4) / 16, two-sided 10/16.
    assert mcnemar_exact(3, 1) == pytest.approx(0.625)
    # 5 flips one way: 2/32 = 0.0625, not significant; the order of the counts does not matter.
    assert mcnemar_exact(0, 5) == mcnemar_exact(5, 0) == pytest.approx(0.0625)
    assert mcnemar_exact(5, 0) > ALPHA
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(2, 2) == 1.0


def test_the_bootstrap_interval_is_seeded_and_brackets_the_mean():
    changes = [-0.5, -0.25, 0.0, 0.0, 0.25, -0.5, 0.0, -0.25]
    low, high = bootstrap_interval(changes)
    assert (low, high) == bootstrap_interval(changes)  # seeded: the same runs, the same interval
    assert low <= sum(changes) / len(changes) <= high
    assert low >= min(changes) and high <= max(changes)
    assert bootstrap_interval([0.1] * 6) == (pytest.approx(0.1), pytest.approx(0.1))
    with pytest.raises(ValueError):
        bootstrap_interval([])


def _runs(failing: set[int], n: int = 12) -> dict[str, Outcome]:
    return {
        f"sc-{i:02d}": Outcome(score=0.5 if i in failing else 1.0, passed=i not in failing)
        for i in range(1, n + 1)
    }


def test_six_more_failing_scenarios_is_a_significant_regression():
    change = paired_change(_runs(set()), _runs({1, 2, 3, 4, 5, 6}))
    assert change.scenarios == 12
    assert change.to_fail == ["sc-01", "sc-02", "sc-03", "sc-04", "sc-05", "sc-06"]
    assert change.to_pass == [] and change.p_value == pytest.approx(0.03125)
    # Mean change by hand: 6 scenarios x -0.5 over 12 = -0.25; every resample mean is <= 0.
    assert change.mean_change == pytest.approx(-0.25)
    assert change.interval is not None and change.interval[1] < 0
    assert change.change == "regressed"


def test_the_same_results_are_no_significant_change_and_the_reverse_an_improvement():
    same = paired_change(_runs({3}), _runs({3}))
    assert same.change == "no significant change" and same.p_value == 1.0
    assert same.mean_change == 0 and same.interval == (0, 0)
    better = paired_change(_runs({1, 2, 3, 4, 5, 6}), _runs(set()))
    assert better.change == "improved" and better.to_pass[:2] == ["sc-01", "sc-02"]


def test_one_flip_each_way_is_noise_and_unpaired_scenarios_are_left_out():
    baseline = {**_runs({1}), "only-then": Outcome(1.0, True)}
    current = {**_runs({2}), "only-now": Outcome(0.0, False)}
    change = paired_change(baseline, current)
    assert change.scenarios == 12 and change.to_fail == ["sc-02"] and change.to_pass == ["sc-01"]
    assert change.change == "no significant change" and change.p_value == 1.0


def test_a_few_scored_pairs_make_no_call_from_the_interval_alone():
    # Two scenarios, both lower: the interval is below zero, but two pairs are too few.
    change = paired_change(
        {"a": Outcome(1.0, True), "b": Outcome(1.0, True)},
        {"a": Outcome(0.9, True), "b": Outcome(0.8, True)},
    )
    assert change.interval is not None and change.interval[1] < 0
    assert change.change == "no significant change"
