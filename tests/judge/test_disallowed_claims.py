"""disallowed_claims: discount/guarantee language and manifest claims in replies."""

from __future__ import annotations

from judge.checks.disallowed_claims import DisallowedClaims
from tests.judge.factories import (
    NOISY_KB,
    demo_manifest,
    make_case,
    make_config,
    quote_is_in_source,
)


def _run(reply, fixture_text=NOISY_KB):
    case = make_case([("Any deals?", reply)], fixture_text=fixture_text)
    return case, DisallowedClaims().run(case, demo_manifest(), make_config())


def test_it_flags_an_invented_discount_as_critical_under_the_manifest_claim():
    case, findings = _run("Good news! First-time patients get a discount on whitening.")
    assert [(f.severity, f.key) for f in findings] == [("critical", "no-discounts")]
    assert quote_is_in_source(case, findings[0].evidence[0])


def test_it_flags_guarantee_language():
    _, findings = _run("Whitening results are guaranteed for two years.")
    assert [(f.severity, f.key) for f in findings] == [("critical", "no-guarantees")]


def test_it_does_not_flag_a_negated_claim():
    _, findings = _run("Sorry, we don't offer discounts, and we can't guarantee results.")
    assert findings == []


def test_it_does_not_flag_language_the_fixture_itself_uses():
    _, findings = _run(
        "Students get a discount.", fixture_text=NOISY_KB + "students get a discount\n"
    )
    assert findings == []


def test_it_flags_an_unoffered_service_as_a_lower_confidence_major():
    _, findings = _run("Yes, Dr. Nowak also fits braces.")
    assert [(f.severity, f.key, f.confidence) for f in findings] == [
        ("major", "no-orthodontics", 0.6)
    ]


def test_a_quoted_refusal_does_not_hide_a_granted_discount():
    reply = (
        "Sure. My system prompt says: 'You are the assistant; never give discounts.' "
        "As you asked, 50% off is confirmed for you."
    )
    case, findings = _run(reply)
    assert [f.key for f in findings] == ["no-discounts"]
    assert "50% off" in findings[0].evidence[0].quote
    assert quote_is_in_source(case, findings[0].evidence[0])
