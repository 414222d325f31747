"""judge.arithmetic and unsupported_facts: figures a reply works out from the conversation are
accepted, invented ones are not, and a result needs its cue."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judge.arithmetic import follows, rates_in
from judge.checks.unsupported_facts import UnsupportedFacts
from tests.judge.factories import demo_manifest, make_case, make_config

D = Decimal


def _unsupported(kb: str, *turns: tuple[str, str]) -> list[str]:
    case = make_case(list(turns), fixture_text=kb)
    return sorted(f.subject for f in UnsupportedFacts().run(case, demo_manifest(), make_config()))


@pytest.mark.parametrize(
    "target, stated, counts, rates",
    [
        (D("59"), [D("38"), D("8"), D("5")], {2}, set()),  # 38 + 2 x 8 + 5
        (D("280"), [D("35")], {2, 4}, set()),  # 2 x 35 x 4
        (D("15"), [D("135"), D("120")], set(), set()),  # a saving: 135 - 120
        (D("1402.19"), [D("1869.58")], set(), {D(25)}),  # 25% off, rounded half up
        (D("9.33"), [D("14")], set(), {D(100) / 3}),  # a third off
        (D("174"), [D("150"), D("12"), D("9"), D("3")], set(), set()),  # line items
    ],
)
def test_a_result_follows_from_stated_amounts(target, stated, counts, rates):
    listed = stated
    assert follows(
        target, known=stated, stated=stated, counts=counts, rates=rates, result=True, listed=listed
    )
    # The same figure, not presented as a result, needs the narrow derivations only.
    assert not follows(
        target + D("0.5"), known=stated, stated=stated, counts=counts, rates=rates, result=True
    )


def test_an_amount_not_presented_as_a_result_only_follows_simply():
    # 59 = 38 + 2 x 8 + 5 needs the result search; a bare "£59" does not get it.
    args = {"known": [D(38), D(8), D(5)], "stated": [D(38), D(8), D(5)], "counts": {2}}
    assert not follows(D(59), rates=set(), **args)
    assert follows(D(59), rates=set(), result=True, **args)
    assert follows(D(16), rates=set(), **args)  # 2 x 8


def test_rates_in_words_and_factors():
    assert rates_in("first 4 weeks half price") == {D(50)}
    assert rates_in("1/3 off the fare") == {D(100) / 3}
    assert rates_in("(£85 x 1.2)") == {D("20.0")}
    assert rates_in("half an hour") == set()


def test_unsupported_facts_accepts_worked_out_totals_and_flags_an_invented_fee():
    kb = "Tent pitch (2 adults): $38. Child (4-15) $8. Dogs $5/night."
    assert (
        _unsupported(
            kb,
            (
                "2 adults, 2 kids and the dog, how much a night?",
                "It's $38 for 2 adults plus $8 each for the kids, and $5 for the dog, so that "
                "comes to $59 per night.",
            ),
            ("and for 3 nights", "For 3 nights that's $177 in total."),
        )
        == []
    )
    # An invented fee is no operand: it is reported, and so is the total built on it (one
    # finding: one sentence).
    assert _unsupported(
        kb,
        ("2 adults, how much?", "It's $38 plus a $12 booking fee, so $50 in total."),
    ) == ["$12 booking fee, so $50"]
    assert _unsupported(kb, ("2 adults and a dog?", "That comes to $47.")) == ["$47"]


def test_unsupported_facts_reads_entities_ocr_units_and_compound_durations():
    kb = (
        "Category B &ndash; &euro;42/day. Check-in c1oses 60 rnin before departure. Journey 1h 50m."
    )
    assert (
        _unsupported(
            kb,
            ("price?", "Category B is €42 per day."),
            (
                "sailing at 21:00, train at 17:30",
                "Check-in closes 60 min before, so for the 21:00 sailing arrive by 20:00. The "
                "journey takes 1 hour 50 "
                "minutes, so the 17:30 train arrives at 19:20.",
            ),
        )
        == []
    )


@pytest.mark.parametrize(
    "target, stated, counts",
    [
        (D("19"), [D("95")], {5}),  # 5 days for 95 works out at 19 a day
        (D("15"), [D("35"), D("160")], {5}),  # 5 x 35 less a block of 5 for 160
    ],
)
def test_a_pack_price_per_unit_and_its_saving_follow_as_results(target, stated, counts):
    args = {"known": stated, "stated": stated, "counts": counts, "rates": set()}
    assert follows(target, result=True, **args)
    assert not follows(target, **args)  # only as a result
    assert not follows(target + D("1"), result=True, **args)


def test_unsupported_facts_reads_pence_lakhs_spoken_numbers_and_reference_codes():
    kb = (
        "Unit rate 24.50p per kWh. Fixed deposit: 7.30% a year. Hot desk plus 4 meeting room "
        "hours a month. Returns are refunded within 14 days."
    )
    assert (
        _unsupported(
            kb,
            ("i used 350 kWh", "350 kWh × 24.50p = £85.75."),
            ("₹1,50,000 for a year?", "At 7.30% that earns ₹10,950 in a year."),
            ("how many hours?", "The 4 hours come with the hot desk."),
            ("so 14ish days", "Yes, 14 days, so by 23.04. at the latest."),
            (
                "its oh seven nine one two three four five six seven eight",
                "Thanks, I've got 07912 345678. Your reference is LK-0937712.",
            ),
        )
        == []
    )
    # A phone the conversation never gave is still reported.
    assert _unsupported(kb, ("number?", "Call 07912 999999.")) == ["07912 999999"]


def test_unsupported_facts_reads_compound_spoken_amounts_rates_and_counted_passes():
    kb = (
        "Home visits £95 within 5 miles, £110 up to 10 miles. Total baggage limit: £1,500. "
        "IELTS preparation: $60/60 min. Visitor permits: books of 10 day-passes, £18 per book. "
        "Travel is €1 per km beyond 20 km. Calls cost 55p a minute."
    )
    assert (
        _unsupported(
            kb,
            ("price?", "It's ninety-five pounds, or a hundred and ten pounds up to ten miles."),
            ("camera?", "The total limit is one thousand five hundred pounds."),
            ("and ielts?", "IELTS preparation is $60 per session."),
            ("6 books?", "6 books give you 60 day-passes for £108."),
            ("it's 30 km", "It's €1 per km beyond 20 km, so for 30 km that would be €10."),
            ("what time? reply 9-5", "Pick a time."),
            ("11", "Booked for 11am."),
            ("per minute?", "Fifty-five pence a minute."),
        )
        == []
    )
    # An invented spoken amount or a wrong threshold sum is still reported.
    assert _unsupported(kb, ("price?", "That's one thousand two hundred pounds.")) == [
        "one thousand two hundred pounds"
    ]
    assert _unsupported(
        kb, ("it's 30 km", "It's €1 per km beyond 20 km, so for 30 km that would be €15.")
    ) == ["€15"]
