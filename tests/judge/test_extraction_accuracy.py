"""extraction_accuracy: stated intake fields vs the responder's last extracted values."""

from __future__ import annotations

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
    assert [(f.severity, f.subject, f.turn_index) for f in findings] == [("major", "phone", 0)]
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
    by_subject = {f.subject: f.severity for f in findings}
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
