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


def _price_actions():
    from judge.schemas import Evidence

    findings = [
        make_finding(
            "critical",
            rule_id="unsupported_facts",
            subject="money:45 EUR",
            fix_target="prompt",
            evidence=[Evidence(source="reply", quote="A clean is 45 EUR today.", turn=0)],
        ),
        make_finding("minor", subject="t1"),
    ]
    return top_actions(findings), findings


def _phrasing(*items):
    from judge.llm_actions import ActionPhrasing, PhrasedAction

    return ActionPhrasing(actions=[PhrasedAction(rank=r, title=t, text=x) for r, t, x in items])


def test_a_phrasing_may_only_restate_facts_of_its_findings():
    import pytest

    from judge.llm_actions import check_phrasing

    actions, findings = _price_actions()
    assert [a.rank for a in actions] == [1, 2]
    grounded = _phrasing(
        (1, "Stop inventing the 45 EUR price", "The reply quoted €45; the KB has no such price."),
        (2, "Ask one thing at a time", "Replies ask too many questions."),
    )
    check_phrasing(grounded, actions, findings)  # 45 EUR is in the finding, in any format
    invented = _phrasing(
        (1, "Stop inventing prices", "Say a clean costs 80 EUR instead."),
        (2, "Ask one thing at a time", "Call 555-0100 to learn more."),
    )
    with pytest.raises(ValueError, match="action 1 states facts not in its findings: 80"):
        check_phrasing(invented, actions, findings)
    with pytest.raises(ValueError, match="once each"):
        check_phrasing(_phrasing((1, "One", "only the first")), actions, findings)
    with pytest.raises(ValueError, match="once each"):
        check_phrasing(
            _phrasing((1, "One", "aaa"), (1, "Again", "bbb"), (2, "Two", "ccc")), actions, findings
        )


def test_the_offline_engine_keeps_the_template_wording():
    from judge.llm_actions import phrase_actions
    from qalab.llm import get_engine
    from qalab.llm.base import NullLedger

    actions, findings = _price_actions()
    phrased = phrase_actions(
        actions, findings, engine=get_engine("offline", ledger=NullLedger()), purpose="t"
    )
    assert [(a.title, a.rationale, a.finding_indexes) for a in phrased] == [
        (a.title, a.rationale, a.finding_indexes) for a in actions
    ]


def test_a_group_with_a_critical_outranks_any_count_of_lesser_findings():
    findings = [
        # 20 majors of one rule would score 60 by the formula ...
        *[make_finding("major", rule_id="ignored_question", subject=f"q{i}") for i in range(20)],
        # ... one low-confidence critical scores 3, yet it comes first.
        make_finding(
            "critical",
            rule_id="unsafe_advice",
            subject="ibuprofen",
            confidence=0.3,
            fix_target="prompt",
        ),
    ]
    actions = top_actions(findings)
    assert actions[0].finding_indexes == [20]
    assert actions[0].title == "Stop giving medical or safety advice (1 finding)"
    assert actions[1].title == "Answer the customer's questions before moving on (20 findings)"


def test_every_catalog_rule_has_a_person_facing_action_title():
    from judge.rules import RULES

    for rule in RULES:
        assert rule.action and rule.action[0].isupper() and "_" not in rule.action, rule.id
