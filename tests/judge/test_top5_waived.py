"""Top 5 with waived findings (issue 32, point 8): what a reviewer set aside ranks below every
finding that counts toward the gate, however many and however severe."""

from __future__ import annotations

from judge.actions import top_actions
from judge.schemas import Finding
from tests.judge.test_gate import make_finding


def _many_prices(n: int) -> list[Finding]:
    return [
        make_finding(
            "critical",
            rule_id="unsupported_facts",
            subject="money:19 EUR",
            fix_target="prompt",
            case_key=f"case-{i}",
        )
        for i in range(n)
    ]


def test_a_waived_critical_group_of_many_ranks_below_one_counting_critical() -> None:
    prices = _many_prices(12)
    unsafe = make_finding("critical", rule_id="unsafe_advice", subject="dose", fix_target="prompt")
    minor = make_finding("minor", subject="three questions")
    findings = [*prices, unsafe, minor]
    # Without a decision the twelve criticals lead.
    assert top_actions(findings)[0].finding_indexes == list(range(12))
    actions = top_actions(findings, waived=range(12))
    assert [a.finding_indexes for a in actions] == [[12], [13], list(range(12))]
    # Below even a minor finding that counts; the rationale says why.
    assert "12 of them set aside by a reviewer's decision" in actions[2].rationale
    assert "set aside" not in actions[0].rationale


def test_a_group_is_ranked_by_its_counting_findings_only() -> None:
    # 11 waived prices and one that counts: the group stays, ranked as one critical.
    prices = _many_prices(12)
    majors = [
        make_finding("major", rule_id="ignored_question", subject=f"q{i}", case_key=f"c{i}")
        for i in range(5)
    ]
    actions = top_actions([*prices, *majors], waived=range(11))
    assert actions[0].finding_indexes == list(range(12))  # a critical still counts
    assert "11 of them set aside" in actions[0].rationale
    # Waived groups keep their own order among themselves.
    actions = top_actions([*prices, *majors], waived=range(17))
    assert [a.finding_indexes for a in actions] == [list(range(12)), list(range(12, 17))]
