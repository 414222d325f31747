"""Is a change between two runs on the same test set more than noise? Paired statistics over
scenarios (issue 34): each scenario is played by both runs, so the runs are compared scenario
by scenario, never as two independent samples.

- **Score**: the mean per-scenario change of the overall score, with a 95% interval from a
  paired bootstrap: resample the scenarios with replacement (`RESAMPLES` times, seeded, so the
  same runs give the same interval), take each resample's mean change, read the 2.5th and 97.5th
  percentiles.
- **Pass/fail**: an exact McNemar test on the scenarios that flipped: under "no change" a flip
  is as likely either way, so the number that went from pass to fail among all flips is
  binomial(flips, 1/2); the two-sided p-value doubles the smaller tail (at most 1).

The change is **regressed** when the interval lies below zero (with at least `MIN_SCENARIOS`
scored pairs) or the flips to fail are significantly more (p < `ALPHA`); **improved** the other way round; otherwise **no significant
change**. What it cannot say: with few scenarios only large changes are significant (6 flips,
all one way, are the fewest that reach p < 0.05); a nondeterministic bot that changed nothing
is "no significant change", not "the same"; and it says nothing about scenarios only one run
played.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Literal

RESAMPLES = 2000
ALPHA = 0.05
SEED = 20261207
# Fewer paired scored scenarios than this: no call from the score interval (a resample of two
# or three numbers says little), the pass/fail test alone.
MIN_SCENARIOS = 5

Change = Literal["improved", "regressed", "no significant change"]


def mcnemar_exact(to_fail: int, to_pass: int) -> float:
    """Two-sided exact McNemar p-value for `to_fail` pass->fail and `to_pass` fail->pass
    flips: 2 x P(X <= min) for X ~ binomial(flips, 1/2), capped at 1 (1 with no flip)."""
    flips = to_fail + to_pass
    if flips == 0:
        return 1.0
    tail = sum(comb(flips, k) for k in range(min(to_fail, to_pass) + 1)) / 2**flips
    return min(1.0, 2 * tail)


def bootstrap_interval(
    changes: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """The 95% percentile interval of the mean of `changes` by resampling them with
    replacement `resamples` times (seeded)."""
    if not changes:
        raise ValueError("no paired scenario to resample")
    rng = random.Random(seed)
    n = len(changes)
    means = sorted(sum(rng.choices(changes, k=n)) / n for _ in range(resamples))
    return means[int(0.025 * (resamples - 1))], means[int(0.975 * (resamples - 1))]


@dataclass(frozen=True)
class Outcome:
    """One scenario's result in one run: its overall score and whether it passed."""

    score: float | None
    passed: bool | None


def over_trials(trials: Sequence[Outcome]) -> Outcome:
    """A scenario's outcome over its trials: the mean overall score, and passed when every
    judged trial passed (pass^k, the gate's reading); None where no trial was judged. One
    trial's outcome is itself."""
    scores = [t.score for t in trials if t.score is not None]
    verdicts = [t.passed for t in trials if t.passed is not None]
    return Outcome(
        score=sum(scores) / len(scores) if scores else None,
        passed=all(verdicts) if verdicts else None,
    )


@dataclass(frozen=True)
class PairedChange:
    """Run against baseline on the scenarios both played."""

    scenarios: int
    mean_change: float | None
    interval: tuple[float, float] | None
    to_fail: list[str] = field(default_factory=list)
    to_pass: list[str] = field(default_factory=list)
    p_value: float = 1.0
    change: Change = "no significant change"
    resamples: int = RESAMPLES


def paired_change(
    baseline: Mapping[str, Outcome],
    current: Mapping[str, Outcome],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedChange:
    """Compare the scenarios both runs played (a pass/fail and a score each)."""
    keys = sorted(
        k
        for k in set(baseline) & set(current)
        if baseline[k].passed is not None and current[k].passed is not None
    )
    to_fail = [k for k in keys if baseline[k].passed and not current[k].passed]
    to_pass = [k for k in keys if not baseline[k].passed and current[k].passed]
    p_value = mcnemar_exact(len(to_fail), len(to_pass))
    scored = [
        current[k].score - baseline[k].score  # type: ignore[operator]
        for k in keys
        if current[k].score is not None and baseline[k].score is not None
    ]
    interval = bootstrap_interval(scored, resamples=resamples, seed=seed) if scored else None
    mean = sum(scored) / len(scored) if scored else None
    change: Change = "no significant change"
    called = interval if len(scored) >= MIN_SCENARIOS else None
    if (called and called[1] < 0) or (p_value < ALPHA and len(to_fail) > len(to_pass)):
        change = "regressed"
    elif (called and called[0] > 0) or (p_value < ALPHA and len(to_pass) > len(to_fail)):
        change = "improved"
    return PairedChange(
        scenarios=len(keys),
        mean_change=mean,
        interval=interval,
        to_fail=to_fail,
        to_pass=to_pass,
        p_value=p_value,
        change=change,
        resamples=resamples,
    )
