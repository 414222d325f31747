"""How far a judge agrees with people, from their labels: a rule's precision with a Wilson
interval, counts corrected by measured precision, and Cohen's kappa between two reviewers.
Pure: no Django (the labels are read by runs.accuracy).

- **Wilson score interval** (Wilson 1927): for k right of n labels, the 95% interval of the
  rule's precision; unlike the normal approximation it stays inside [0, 1] and is honest for
  small n and for precision near 0 or 1.
- **Corrected count**: a rule that reported c findings and whose labels say it is right with
  precision p has about c·p true findings; summed over rules, with the interval from each rule's
  Wilson bounds (c·low, c·high summed: conservative, as if the rules' errors went the same way).
  A rule with fewer than `min_labels` labels cannot be corrected: the figure is absent, and says
  which rules lacked labels. This is the simple estimator the design calls for, not prediction-
  powered inference: it corrects false alarms only (misses added by hand are counted apart).
- **Cohen's kappa** (1960) on two reviewers' right/wrong decisions on the same items: agreement
  beyond chance, (p_o - p_e) / (1 - p_e); 1 is full agreement, 0 what chance gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import sqrt

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Precision:
    right: int
    labels: int
    value: float | None
    low: float | None
    high: float | None


def wilson(right: int, labels: int, *, z: float = Z_95) -> Precision:
    """The precision `right / labels` with its Wilson score interval (None for no labels)."""
    if labels <= 0:
        return Precision(right=0, labels=0, value=None, low=None, high=None)
    if not 0 <= right <= labels:
        raise ValueError(f"right ({right}) must be between 0 and labels ({labels})")
    p = right / labels
    denominator = 1 + z * z / labels
    centre = (p + z * z / (2 * labels)) / denominator
    half = z * sqrt(p * (1 - p) / labels + z * z / (4 * labels * labels)) / denominator
    # At none (all) right the bound is exactly 0 (1); computed, it may be off by a rounding
    # error (5.6e-17 at 0 of 3) that a percentage would show as 1%.
    return Precision(
        right=right,
        labels=labels,
        value=p,
        low=0.0 if right == 0 else max(0.0, centre - half),
        high=1.0 if right == labels else min(1.0, centre + half),
    )


@dataclass(frozen=True)
class CorrectedCount:
    """An estimate of the true number of findings, or why there is none."""

    reported: int
    estimate: float | None
    low: float | None
    high: float | None
    labels: int  # the labels the estimate rests on
    missing: tuple[str, ...]  # rules with findings but too few labels


def corrected_count(
    reported: Mapping[str, int], precision: Mapping[str, Precision], *, min_labels: int
) -> CorrectedCount:
    """The findings each rule reported (`reported`, by rule) corrected by the rule's measured
    precision; no estimate when a rule that reported findings has fewer than `min_labels`."""
    total = sum(reported.values())
    missing = tuple(
        sorted(
            rule
            for rule, count in reported.items()
            if count and (rule not in precision or precision[rule].labels < min_labels)
        )
    )
    used = sum(
        precision[rule].labels for rule, count in reported.items() if count and rule in precision
    )
    if missing:
        return CorrectedCount(total, None, None, None, used, missing)
    estimate = low = high = 0.0
    for rule, count in reported.items():
        if not count:
            continue
        p = precision[rule]
        assert p.value is not None and p.low is not None and p.high is not None
        estimate += count * p.value
        low += count * p.low
        high += count * p.high
    return CorrectedCount(total, estimate, low, high, used, ())


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' yes/no on the same items; None without items, 1.0 when
    both said the same thing everywhere (even if chance would predict it)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    a_yes = sum(a for a, _ in pairs) / n
    b_yes = sum(b for _, b in pairs) / n
    expected = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1 - expected)
