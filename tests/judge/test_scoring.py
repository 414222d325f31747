"""Score formulas with worked numbers."""

from __future__ import annotations

import pytest

from judge.checks.questions_per_turn import QuestionsPerTurn
from judge.checks.unsupported_facts import UnsupportedFacts
from judge.schemas import CaseJudgement, CaseScores
from judge.scoring import case_passed, case_scores, run_scores, weighted_overall
from tests.judge.factories import demo_manifest, make_case, make_config


def _findings(case, *checks):
    return [f for c in checks for f in c.run(case, demo_manifest(), make_config())]


def test_it_scores_groundedness_over_factual_sentences():
    # 4 sentences: 3 state facts (80€ ok, 45 EUR invented, 09:00 ok), 1 is chit-chat.
    case = make_case(
        [("Prices?", "Hello there. A clean is 80€. A filling is 45 EUR. We open at 09:00 Sat.")],
        actual_status="COMPLETE",
    )
    findings = _findings(case, UnsupportedFacts())
    scores = case_scores(case, findings, demo_manifest())
    assert scores.groundedness == pytest.approx(1 - 1 / 3, abs=1e-4)


def test_it_scores_groundedness_1_without_facts_and_none_without_replies():
    chatty = make_case([("hi", "Hello! How can I help?")])
    assert case_scores(chatty, [], demo_manifest()).groundedness == 1.0
    silent = make_case([("hi", "   ")])
    assert case_scores(silent, [], demo_manifest()).groundedness is None


def test_it_scores_extraction_as_correct_over_stated_fields():
    # Stated: full_name (correct), phone (wrong), service (not extracted) -> 1/3.
    case = make_case(
        [
            (
                "Mary O'Brien, 087 123 4567, hygiene clean please",
                "Thanks",
                {"full_name": "mary o'brien", "phone": "087 000 0000"},
            )
        ]
    )
    scores = case_scores(case, [], demo_manifest())
    assert scores.extraction_accuracy == pytest.approx(0.3333, abs=1e-4)
    nothing_stated = make_case([("hi", "Hello")])
    assert case_scores(nothing_stated, [], demo_manifest()).extraction_accuracy is None


def test_it_scores_conversation_quality_with_penalties_and_clamps_at_zero():
    case = make_case([("hi", "Name? Phone? Email?"), ("ok", "Name? Phone? Email? Date? Time?")])
    findings = _findings(case, QuestionsPerTurn())  # one minor, one major
    assert case_scores(case, findings, demo_manifest()).conversation_quality == pytest.approx(0.55)
    many = findings * 4  # 4 minor + 4 major = 1.8 penalty
    assert case_scores(case, many, demo_manifest()).conversation_quality == 0.0


def test_it_renormalizes_the_overall_weights_over_applicable_dimensions():
    assert weighted_overall(
        {"groundedness": 0.5, "extraction_accuracy": None, "conversation_quality": 0.7}
    ) == pytest.approx(0.375 / 0.65)
    assert weighted_overall(
        {"groundedness": 1.0, "extraction_accuracy": 0.5, "conversation_quality": 0.0}
    ) == pytest.approx(0.575)
    assert (
        weighted_overall(
            {"groundedness": None, "extraction_accuracy": None, "conversation_quality": None}
        )
        == 0.0
    )


def test_it_passes_a_case_only_at_or_above_the_threshold_and_without_critical():
    config = make_config(min_score_to_pass=0.6, strictness=0.5)  # threshold 0.7
    assert config.threshold == pytest.approx(0.7)
    at = CaseScores(
        groundedness=0.7, extraction_accuracy=None, conversation_quality=0.7, overall=0.7
    )
    below = at.model_copy(update={"overall": 0.69})
    assert case_passed(at, [], config)
    assert not case_passed(below, [], config)
    case = make_case([("?", "It is 45 EUR.")])
    critical = _findings(case, UnsupportedFacts())
    perfect = at.model_copy(update={"overall": 1.0})
    assert not case_passed(perfect, critical, config)


def _judgement(key, g, e, q, overall):
    scores = CaseScores(
        groundedness=g, extraction_accuracy=e, conversation_quality=q, overall=overall
    )
    return CaseJudgement(case_key=key, findings=[], scores=scores, passed=True)


def test_it_averages_run_scores_over_the_cases_where_each_dimension_applies():
    scores = run_scores([_judgement("a", 1.0, None, 0.7, 0.9), _judgement("b", 0.5, 0.5, 0.4, 0.5)])
    assert scores.groundedness == 0.75
    assert scores.extraction_accuracy == 0.5
    assert scores.conversation_quality == 0.55
    assert scores.overall == 0.7
    assert run_scores([]).overall is None
