"""judge.agreement on worked examples computed by hand."""

from __future__ import annotations

from math import sqrt

import pytest

from judge.agreement import cohen_kappa, corrected_count, wilson


def test_the_wilson_interval_of_8_right_of_10() -> None:
    # By hand, z = 1.96: centre = (0.8 + 1.96²/20) / (1 + 1.96²/10) = 0.99208 / 1.38416 = 0.7167;
    # half = 1.96 * sqrt(0.8*0.2/10 + 1.96²/400) / 1.38416 = 1.96 * 0.16030 / 1.38416 = 0.2270.
    z = 1.959963984540054
    centre = (0.8 + z * z / 20) / (1 + z * z / 10)
    half = z * sqrt(0.016 + z * z / 400) / (1 + z * z / 10)
    p = wilson(8, 10)
    assert (p.right, p.labels, p.value) == (8, 10, 0.8)
    assert p.low == pytest.approx(centre - half) == pytest.approx(0.4902, abs=1e-4)
    assert p.high == pytest.approx(centre + half) == pytest.approx(0.9433, abs=1e-4)


def test_the_wilson_interval_stays_inside_zero_and_one() -> None:
    all_right, none_right = wilson(5, 5), wilson(0, 5)
    assert all_right.high == 1.0 and 0.5 < all_right.low < 1.0
    assert none_right.low == 0.0 and 0.0 < none_right.high < 0.5
    assert wilson(0, 0).value is None
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_a_count_corrected_by_precision() -> None:
    precision = {"a": wilson(8, 10), "b": wilson(20, 20)}
    result = corrected_count({"a": 5, "b": 2}, precision, min_labels=10)
    # 5 x 0.8 + 2 x 1.0 = 6.0, between 5 x 0.4902 + 2 x low(20/20) and 5 x 0.9433 + 2.
    assert result.reported == 7 and result.estimate == pytest.approx(6.0)
    assert result.low == pytest.approx(5 * precision["a"].low + 2 * precision["b"].low)
    assert result.high == pytest.approx(5 * precision["a"].high + 2.0)
    assert result.labels == 30 and result.missing == ()


def test_no_corrected_count_when_a_rule_with_findings_has_too_few_labels() -> None:
    result = corrected_count({"a": 5, "c": 1, "d": 0}, {"a": wilson(8, 10)}, min_labels=10)
    assert result.estimate is None and result.missing == ("c",)
    assert corrected_count({"a": 5}, {"a": wilson(3, 4)}, min_labels=10).missing == ("a",)


def test_cohen_kappa_by_hand() -> None:
    # 10 items: both yes 4, both no 3, A yes B no 2, A no B yes 1.
    pairs = [(True, True)] * 4 + [(False, False)] * 3 + [(True, False)] * 2 + [(False, True)]
    # p_o = 0.7; A yes 0.6, B yes 0.5; p_e = 0.3 + 0.2 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(True, True), (False, False)]) == pytest.approx(1.0)
    assert cohen_kappa([(True, True)] * 3) == 1.0
    assert cohen_kappa([]) is None
