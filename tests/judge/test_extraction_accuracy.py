"""extraction_accuracy: stated intake fields vs the responder's last extracted values."""

from __future__ import annotations

from datetime import date

import pytest

from judge.checks.extraction_accuracy import ExtractionAccuracy, assess_fields
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source


def _run(*turns):
    case = make_case(list(turns))
    return case, ExtractionAccuracy().run(case, demo_manifest(), make_config())


def test_it_accepts_values_extracted_in_another_format():
    _, findings = _run(
        (
            "I'm mary o'brien, 087 123 4567, for a hygiene clean on 15/03/2026 at 10.30",
            "Thanks!",
            {
                "full_name": "Mary O'Brien",
                "phone": "+353871234567",
                "service": "hygiene clean",
                "preferred_date": "March 15, 2026",
                "preferred_time": "10:30",
            },
        )
    )
    assert findings == []


def test_it_flags_a_wrong_value_with_literal_extracted_customer_and_persona_quotes():
    case, findings = _run(
        ("My number is 087 123 4567", "Got it.", {"phone": "087 123 4576"}),
    )
    assert [(f.severity, f.key, f.turn_index) for f in findings] == [("major", "phone", 0)]
    sources = {e.source: e.quote for e in findings[0].evidence}
    assert sources == {
        "extracted": "087 123 4576",
        "customer": "087 123 4567",
        "persona": "+353 87 123 4567",
    }
    assert all(quote_is_in_source(case, e) for e in findings[0].evidence)


def test_it_uses_the_last_extracted_value_per_key():
    _, findings = _run(
        ("I'm Mary O Brien", "Hi Marie", {"full_name": "Marie O'Brien"}),
        ("It's Mary, not Marie", "Sorry, Mary!", {"full_name": "Mary O'Brien"}),
    )
    assert findings == []


def test_it_flags_stated_but_never_extracted_fields_by_requiredness():
    case, findings = _run(
        ("Hi, my email is mary.obrien@example.com and my name is Mary O'Brien", "Hello!"),
    )
    by_subject = {f.key: f.severity for f in findings}
    assert by_subject == {"full_name": "major", "email": "minor"}
    assert all(quote_is_in_source(case, e) for f in findings for e in f.evidence)


def test_it_ignores_fields_the_customer_never_stated():
    _, findings = _run(("I'd like a cleaning please", "Sure, what's your name?"))
    assert findings == []


def test_it_counts_only_stated_fields_in_the_assessment():
    case = make_case(
        [("Mary O'Brien here, phone 0871234567", "Thanks", {"full_name": "Mary OBrien"})]
    )
    assessed = {a.key: a.correct for a in assess_fields(case, demo_manifest())}
    assert assessed == {"full_name": True, "phone": False}


def _on(case, today):
    """The case as if its conversation took place on `today` (its reference day)."""
    blueprint = case.blueprint.model_copy(update={"reference_date": today})
    return case.model_copy(update={"blueprint": blueprint})


def _run_on(today, *turns, facts=None):
    case = _on(make_case(list(turns), facts=facts), today)
    return case, ExtractionAccuracy().run(case, demo_manifest(), make_config())


TUESDAY = date(2026, 3, 10)  # the persona's date 2026-03-15 is the Sunday after


@pytest.mark.parametrize(
    ("said", "extracted"),
    [
        ("this Sunday would suit me, around half ten", "this Sunday"),
        ("Sunday the 15th, half ten", "Sunday the 15th"),
        ("the 15th at 10.30", "2026-03-15"),
        ("on Sunday, half past ten", "Sunday"),
    ],
)
def test_a_relative_date_stated_and_extracted_is_the_day_it_means(said, extracted):
    case, findings = _run_on(
        TUESDAY,
        (said, "Noted.", {"preferred_date": extracted, "preferred_time": "10:30"}),
    )
    assert findings == []
    assessed = {a.key: (a.correct, a.stated_quote) for a in assess_fields(case, demo_manifest())}
    assert assessed["preferred_date"][0] and assessed["preferred_time"][0], assessed
    assert assessed["preferred_date"][1] in said and assessed["preferred_time"][1] in said


def test_a_relative_date_extracted_as_another_day_is_flagged():
    case, findings = _run_on(
        TUESDAY, ("next Sunday please", "Noted.", {"preferred_date": "2026-03-22"})
    )
    # "next Sunday" on Tuesday 10 March means the Sunday of next week: the 22nd, not the fact.
    assert findings == []  # the customer never stated the persona's date: nothing to judge
    case, findings = _run_on(
        TUESDAY, ("this Sunday please", "Noted.", {"preferred_date": "next Sunday"})
    )
    assert [(f.key, f.severity) for f in findings] == [("preferred_date", "major")]
    sources = {e.source: e.quote for e in findings[0].evidence}
    assert sources == {
        "extracted": "next Sunday",
        "customer": "this Sunday",
        "persona": "2026-03-15",
    }
    assert all(quote_is_in_source(case, e) for e in findings[0].evidence)


def test_without_a_reference_day_a_relative_date_is_never_taken_for_the_fact():
    _, findings = _run(("this Sunday please", "Noted.", {"preferred_date": "this Sunday"}))
    assert findings == []  # "this Sunday" cannot be told to be the 15th: not judged
    _, findings = _run(
        ("Sunday the 15th of March please", "Noted.", {"preferred_date": "this Sunday"})
    )
    assert [f.key for f in findings] == ["preferred_date"]


def test_a_fuzzy_time_is_the_clock_time_it_names():
    _, findings = _run(("half ten would be great", "Noted.", {"preferred_time": "10:30"}))
    assert findings == []
    _, findings = _run(("around 11 would be great", "Noted.", {"preferred_time": "11:00"}))
    assert findings == []  # 11:00 is not the persona's 10:30: the fact was never stated
    _, findings = _run(("half ten please", "Noted.", {"preferred_time": "11:00"}))
    assert [(f.key, f.severity) for f in findings] == [("preferred_time", "major")]
    assert {e.source: e.quote for e in findings[0].evidence}["customer"] == "half ten"
