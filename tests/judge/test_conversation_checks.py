"""questions_per_turn, repeated_question and final_status."""

from __future__ import annotations

from judge.checks.final_status import FinalStatus
from judge.checks.questions_per_turn import QuestionsPerTurn
from judge.checks.repeated_question import RepeatedQuestion
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source


def _questions(reply, limit=2):
    case = make_case([("hi", reply)])
    config = make_config(max_questions_per_turn=limit)
    return case, QuestionsPerTurn().run(case, demo_manifest(), config)


def test_it_allows_replies_within_the_question_limit():
    _, findings = _questions("Hello! What is your name? And your phone number?")
    assert findings == []


def test_it_flags_one_question_over_the_limit_as_minor_with_the_questions_quoted():
    case, findings = _questions("Hi. Name? Phone? Which service would you like? Thanks.")
    assert [(f.severity, f.fix_target) for f in findings] == [("minor", "skill")]
    assert findings[0].evidence[0].quote == "Name? Phone? Which service would you like?"
    assert quote_is_in_source(case, findings[0].evidence[0])


def test_it_flags_more_than_twice_the_limit_as_major():
    _, findings = _questions("Name? Phone? Email? Service? Date?")
    assert [f.severity for f in findings] == ["major"]


def _repeats(*replies):
    case = make_case([("ok", r) for r in replies])
    return case, RepeatedQuestion().run(case, demo_manifest(), make_config())


def test_it_flags_a_question_asked_again_in_a_later_turn_as_minor():
    case, findings = _repeats(
        "What is your phone number?", "Thanks. Could you tell me your phone number?"
    )
    assert [(f.severity, f.turn_index) for f in findings] == [("minor", 1)]
    assert [e.turn for e in findings[0].evidence] == [0, 1]
    assert all(quote_is_in_source(case, e) for e in findings[0].evidence)


def test_it_flags_a_question_asked_three_times_as_major():
    _, findings = _repeats(
        "Which service would you like?",
        "Which service would you like?",
        "Please, which service would you like?",
    )
    assert [f.severity for f in findings] == ["major"]


def test_it_does_not_flag_different_questions():
    _, findings = _repeats("Which service would you like?", "Which date suits you best?")
    assert findings == []


def _status(expected, actual, replies=("Booked!",)):
    case = make_case([("hi", r) for r in replies], expected_status=expected, actual_status=actual)
    return case, FinalStatus().run(case, demo_manifest(), make_config())


def test_it_accepts_the_expected_final_status():
    assert _status("COMPLETE", "COMPLETE")[1] == []


def test_it_flags_a_status_mismatch_as_major_quoting_the_last_reply():
    case, findings = _status("COMPLETE", "AWAITING_RESPONSE", ("Hi", "  What date?  "))
    assert [(f.severity, f.fix_target, f.turn_index) for f in findings] == [("major", "skill", 1)]
    assert findings[0].evidence[0].quote == "What date?"
    assert quote_is_in_source(case, findings[0].evidence[0])
    _, findings = _status("AWAITING_RESPONSE", "COMPLETE")
    assert [(f.severity, f.fix_target) for f in findings] == [("major", "pipeline")]


def test_it_flags_a_missing_status_as_minor():
    _, findings = _status("COMPLETE", None)
    assert [f.severity for f in findings] == ["minor"]
