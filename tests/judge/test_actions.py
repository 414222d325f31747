"""Top actions: grouping, ranking by severity x count x confidence / effort, cap at 5."""

from __future__ import annotations

from judge.actions import top_actions
from tests.judge.test_gate import make_finding


def test_it_groups_fact_findings_by_kind_and_titles_them():
    findings = [
        make_finding(
            "critical", rule_id="unsupported_facts", subject="money:45 EUR", fix_target="prompt"
        ),
        make_finding(
            "critical", rule_id="unsupported_facts", subject="money:99 EUR", fix_target="prompt"
        ),
        make_finding(
            "critical",
            rule_id="unsupported_facts",
            subject="money:45 EUR",
            fix_target="prompt",
            case_key="case-2",
        ),
        make_finding(
            "critical", rule_id="unsupported_facts", subject="time:20:00", fix_target="prompt"
        ),
    ]
    actions = top_actions(findings)
    assert [(a.rank, a.title, a.finding_indexes) for a in actions] == [
        (1, "Stop quoting prices not in the KB (3 findings)", [0, 1, 2]),
        (2, "Stop stating times or hours not in the KB (1 finding)", [3]),
    ]
    assert actions[0].target_layer == "prompt"
    assert "2 case(s)" in actions[0].rationale


def test_it_ranks_by_severity_count_confidence_and_effort():
    findings = [
        # 4 minor questions_per_turn (rule-only group): 4 x 1 x 1.0 / S = 4
        *[make_finding("minor", subject=f"t{i}") for i in range(4)],
        # 1 major extraction, effort M: 3 x 1 / 2 = 1.5
        make_finding("major", rule_id="extraction_accuracy", subject="phone", effort="M"),
        # 1 critical at confidence 0.6: 10 x 0.6 / 1 = 6
        make_finding(
            "critical",
            rule_id="disallowed_claims",
            subject="no-discounts",
            confidence=0.6,
            fix_target="prompt",
        ),
        # 2 major final status, effort L: 3 x 2 / 3 = 2
        *[
            make_finding(
                "major",
                rule_id="final_status",
                subject="expected COMPLETE, got X",
                effort="L",
                fix_target="pipeline",
            )
            for _ in range(2)
        ],
    ]
    actions = top_actions(findings)
    assert [a.finding_indexes for a in actions] == [[5], [0, 1, 2, 3], [6, 7], [4]]
    assert actions[1].title == "Ask fewer questions per reply (4 findings)"
    assert actions[3].effort == "M"


def test_it_caps_the_list_at_five():
    findings = [
        make_finding("major", rule_id="extraction_accuracy", subject=f"field_{i}") for i in range(8)
    ]
    actions = top_actions(findings)
    assert len(actions) == 5
    assert [a.rank for a in actions] == [1, 2, 3, 4, 5]
    assert top_actions([]) == []
