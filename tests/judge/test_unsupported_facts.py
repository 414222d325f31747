"""unsupported_facts: invented money, times, phones... are critical; KB and customer facts are not."""

from __future__ import annotations

from judge.checks.unsupported_facts import UnsupportedFacts
from judge.gate import fingerprint
from tests.judge.factories import (
    NOISY_KB,
    demo_manifest,
    make_case,
    make_config,
    quote_is_in_source,
)


def _run(*turns, **kwargs):
    case = make_case(list(turns), **kwargs)
    return case, UnsupportedFacts().run(case, demo_manifest(), make_config())


def test_it_flags_an_invented_price_with_the_reply_sentence_as_evidence():
    case, findings = _run(
        ("How much is a cleaning?", "Hi Mary! A hygiene clean is 45 EUR. Shall I book it?")
    )
    assert [(f.severity, f.subject, f.turn_index) for f in findings] == [("critical", "45 EUR", 0)]
    evidence = findings[0].evidence[0]
    assert evidence.source == "reply"
    assert evidence.quote == "A hygiene clean is 45 EUR."
    assert quote_is_in_source(case, evidence)
    assert findings[0].detector == "deterministic:unsupported_facts"
    assert findings[0].confidence == 1.0


def test_it_accepts_a_kb_price_written_in_another_format():
    # The fixture says "80€", "EUR 65" and "350.00"; the reply spells them differently.
    _, findings = _run(("Prices?", "A clean is EUR 80, a check-up €65.00 and whitening 350 euros."))
    assert findings == []


def test_it_accepts_kb_times_durations_and_contacts_in_other_formats():
    _, findings = _run(
        (
            "When are you open?",
            "Mon-Thu 08:30 to 6pm, Sat 9am-1pm. A check-up takes 30 minutes. "
            "Call +353 1 555 0142, email hello@harbourlanedental.ie or book at "
            "harbourlanedental.ie/book.",
        )
    )
    assert findings == []


def test_it_does_not_flag_a_date_and_time_the_customer_gave():
    _, findings = _run(
        ("Can I come on 15.03 at 10:30?", "Sure, 15.03 at 10:30 is noted."),
        ("Or 16/03 at 11.15?", "Noted: 16/03 at 11:15 instead."),
    )
    assert findings == []


def test_it_flags_invented_hours_phone_email_duration_and_percentage():
    _, findings = _run(
        (
            "Hours?",
            "We are open until 20:00. Call 01 999 8888 or info@dental-offers.com. "
            "We reply within 2 hours. Members get 10% off.",
        )
    )
    # One finding per sentence: the phone and the email of one sentence are one defect.
    assert sorted(f.subject for f in findings) == [
        "01 999 8888 or info@dental-offers.com",
        "10%",
        "2 hours",
        "20:00",
    ]
    assert all(f.severity == "critical" for f in findings)


def test_it_flags_a_repeated_invention_in_each_turn_but_once_per_turn():
    case, findings = _run(
        ("Price?", "It is 45 EUR. Yes, 45 EUR."),
        ("Really?", "Yes, €45."),
    )
    # Verbatim subjects ("45 EUR", "€45"); one fingerprint for the one invented price.
    assert [(f.turn_index, f.subject) for f in findings] == [(0, "45 EUR"), (1, "€45")]
    assert findings[0].fingerprint == findings[1].fingerprint
    assert all(quote_is_in_source(case, e) for f in findings for e in f.evidence)


def test_it_accepts_a_price_the_customer_mentioned_earlier_but_not_later_inventions():
    _, findings = _run(
        ("My friend paid 55 EUR, is that right?", "55 EUR is not on our list; a clean is 80€."),
        ("ok", "The total would be 99 EUR."),
    )
    assert [f.subject for f in findings] == ["99 EUR"]


def test_it_does_not_read_a_reference_number_as_a_phone():
    _, findings = _run(("Booked?", "Yes, your booking reference is 48213377."))
    assert findings == []
    _, findings = _run(("Number?", "You can call 48213377 any time."))
    assert [f.subject for f in findings] == ["48213377"]
    assert findings[0].fingerprint == fingerprint("unsupported_facts", "phone:48213377")


def test_it_accepts_the_customers_own_phone_in_international_format():
    _, findings = _run(("My number is 087 123 4567", "We will ring you on +353 87 123 4567."))
    assert findings == []


def test_it_reads_a_12_hour_kb_time_as_either_half_of_the_day():
    # The fixture writes "5.30" for a 17:30 closing; the reply uses the 24-hour clock.
    _, findings = _run(
        ("Late opening?", "On Wednesdays we stay open until 17:30."),
        fixture_text=NOISY_KB + "late opening wed till 5.30\n",
    )
    assert findings == []


def test_it_accepts_arithmetic_on_supported_values_but_not_a_near_miss():
    # NOISY_KB: clean 80€, check-up EUR 65, filling €120, whitening 350; Sat 09:00 to 13:00.
    _, findings = _run(
        (
            "Two cleans and a check-up for the three of us?",
            "Two cleans are 2 x 80 EUR = 160 EUR; with the check-up (65 EUR) that is 225 EUR.",
        ),
        ("And the filling at 10% off?", "10% off the 120 EUR filling makes it 108 EUR."),
        (
            "When should I arrive on Saturday?",
            "We close at 13:00 and a clean takes 45 minutes, so come by 12:15 at the latest.",
        ),
    )
    assert findings == []
    _, findings = _run(
        ("Two cleans?", "Two cleans are 170 EUR."), ("And Saturday?", "Come by 12:20.")
    )
    assert sorted(f.subject for f in findings) == ["12:20", "170 EUR"]


def test_it_reads_pence_kr_chf_and_weeks():
    _, findings = _run(
        ("Unit rate?", "It is 24.5p per kWh, or 120 kr, or CHF 15 - healing takes 4 weeks.")
    )
    # One sentence: one finding, whose key lists each value's canonical form.
    [finding] = findings
    key = "money:24.50 GBX + money:120 KR + money:15 CHF + duration:40320"
    assert finding.key == key
    assert finding.fingerprint == fingerprint("unsupported_facts", key)


def test_a_daily_rate_times_the_days_the_customer_asked_for_is_supported():
    _, findings = _run(("A clean every day for 4 days?", "The total is 320 EUR."))
    assert findings == []


def test_amounts_said_aloud_are_facts_too():
    _, findings = _run(
        ("popcorn deal?", "yes a family combo for twelve pounds ninety nine with four drinks"),
        ("how long?", "decisions usually come within about four weeks"),
    )
    assert [f.subject for f in findings] == ["twelve pounds ninety nine", "four weeks"]


def test_the_customers_own_contact_read_back_wrongly_is_left_to_partner_contradiction():
    _, findings = _run(
        ("phone 07700 900334, email kwame@postbox.gh", "We will call 07700 900343 to confirm."),
        ("ok", "Confirmation sent to kwame@postbox.com."),
    )
    assert findings == []


def test_a_scanned_price_and_a_customer_hour_support_the_reply():
    kb = "Nail trim ..... £1O\nOrders 8+ weeks ahead."
    _, findings = _run(
        ("nails too?", "A nail trim is £10 on top."),
        ("around 11. ok?", "Booked for 11:00; we ask for orders at least 8 weeks ahead."),
        fixture_text=kb,
    )
    assert findings == []


def test_the_customers_email_read_back_with_a_dot_added_is_left_to_partner_contradiction():
    _, findings = _run(
        (
            "email tferreirahughes@outlook.com",
            "Confirmation will go to tferreira.hughes@outlook.com.",
        )
    )
    assert findings == []
    _, findings = _run(("email tom@outlook.com", "Confirmation will go to info@clinic-mail.com."))
    assert [f.subject for f in findings] == ["info@clinic-mail.com"]


def test_days_counted_between_two_days_one_message_names_are_supported():
    _, findings = _run(
        ("parking from the 3rd to the 10th of december?", "That is 7 days, or 8 counting both."),
        ("renewed on the 3rd, today is the 10th", "The renewal was 7 days ago."),
    )
    assert findings == []
    # Days in two months, or in no message together, count nothing.
    _, invented = _run(
        ("main deadline 29 January, early one 15 October?", "Uploads close 14 days later.")
    )
    assert [f.subject for f in invented] == ["14 days"]


def test_a_result_may_add_or_subtract_stated_durations_and_a_bare_span_may_not():
    kb = "Overstay fee after 45 minutes.\nShipping: 2 working days. Delivery: 5 working days."
    _, worked = _run(
        ("if I stay 60 minutes?", "The fee starts after 45 minutes, so 15 minutes are charged."),
        (
            "when will it arrive?",
            "Shipping takes 2 working days and delivery 5 working days, so within 7 working days.",
        ),
        fixture_text=kb,
    )
    assert worked == []
    _, bare = _run(
        ("if I stay 60 minutes?", "The fee starts after 45 minutes. You get 15 minutes free."),
        fixture_text=kb,
    )
    assert [f.subject for f in bare] == ["15 minutes"]


def test_a_share_split_and_a_factor_before_its_x_are_worked_figures():
    # NOISY_KB: clean 80€, whitening 350.
    _, findings = _run(
        ("whitening for 5 of us?", "350 EUR split 5 ways is 70 EUR each."),
        ("and every 8 weeks?", "8-weekly cleans are 1.5x the price, so 120 EUR per clean."),
    )
    assert findings == []
    _, invented = _run(("whitening for 5 of us?", "It is 75 EUR each."))
    assert [f.subject for f in invented] == ["75 EUR"]


def test_ages_in_year_olds_are_no_spans():
    _, findings = _run(("two kids", "Shall I book your 6 and 11 year olds in for a trial?"))
    assert findings == []
