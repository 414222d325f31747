"""Fact extraction and normalization used by the unsupported-facts check and fingerprints."""

from __future__ import annotations

import pytest

from judge.facts import canonical_subject, extract_facts


def _keys(text: str, *, lenient: bool = False) -> list[str]:
    return [f.key for f in extract_facts(text, lenient=lenient)]


@pytest.mark.parametrize("spelling", ["80 EUR", "EUR 80", "80€", "€80", "80,00 EUR", "80 euros"])
def test_it_normalizes_every_money_spelling_to_one_value(spelling):
    assert _keys(f"It costs {spelling} today.") == ["money:80 EUR"]


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        # A price list's columns, symbol after the amount: the next number is a duration. A
        # Quick on a stranger's org (tests/data/orgs/bike-repair-uk) read "£ 20" as a price and
        # gave the reference bot a critical for quoting its KB line.
        ("Puncture repair 15,00 £ 20 min.", ["money:15 GBP", "duration:20"]),
        ("Full service 75,00 £ 1.5 hours", ["money:75 GBP", "duration:90"]),
        ("Wash 12,00 $ 30mins", ["money:12 USD", "duration:30"]),
        # A symbol before an amount is still that amount's.
        ("Under 18 £10", ["money:10 GBP"]),
        ("Kids 12 £ 8.50", ["money:8.50 GBP"]),
    ],
)
def test_a_symbol_between_an_amount_and_a_duration_is_the_amounts(text, keys):
    assert _keys(text) == keys


def test_it_reads_a_bare_decimal_as_money_only_in_lenient_mode():
    assert _keys("whitening 350.00") == []
    assert "money:350 EUR" in _keys("whitening 350.00", lenient=True)


@pytest.mark.parametrize("spelling", ["08:30", "8.30", "8:30", "8:30am", "8.30 a.m."])
def test_it_normalizes_times_to_24h(spelling):
    assert _keys(f"We open at {spelling}") == ["time:08:30"]


def test_it_reads_pm_times_and_marks_bare_morning_hours_ambiguous():
    facts = extract_facts("open 6pm, or 6:00")
    assert [(f.value, f.ambiguous_12h) for f in facts] == [("18:00", False), ("06:00", True)]


def test_it_does_not_read_dates_as_times_or_phones():
    assert _keys("See you on 15.03.2026 or 2026-03-15 or 15/03") == []


def test_it_finds_phones_emails_urls_durations_and_percentages():
    keys = _keys("Call +353 1 555 0142 or a@b.ie, see www.example.com/x. Takes 1.5 hours, 20% off.")
    assert keys == [
        "phone:35315550142",
        "email:a@b.ie",
        "url:example.com/x",
        "duration:90",
        "percent:20",
    ]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("€45", "45 EUR"),
        ("EUR 45.00", "money:45 EUR"),
        ("8.30", "time:08:30"),
        ("+353 1 555 0142", "phone:35315550142"),
        ("Preferred  Phone", "preferred phone"),
    ],
)
def test_it_gives_one_canonical_subject_per_claim(a, b):
    assert canonical_subject(a) == canonical_subject(b)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("twelve pounds ninety nine", "money:12.99 GBP"),
        ("twenty five euros", "money:25 EUR"),
        ("about four weeks", "duration:40320"),
        ("one hundred and fifty dollars", "money:150 USD"),
        ("£6O", "money:60 GBP"),  # a scanned letter O among a price's digits
        ("8+ weeks ahead", "duration:80640"),
        ("1 305 SEK", "money:1305 KR"),  # thousands grouped by a space
        ("€ 1 200,50", "money:1200.50 EUR"),
        # Rand and rupees by their capital letter (never a time: "R12.50" is not 12:50), slang.
        ("R12.50", "money:12.50 ZAR"),
        ("R 5 000", "money:5000 ZAR"),
        ("Rs 450", "money:450 INR"),
        ("45 quid", "money:45 GBP"),
        ("20 bucks", "money:20 USD"),
    ],
)
def test_it_reads_spoken_and_scanned_amounts(text, key):
    assert _keys(text) == [key]


@pytest.mark.parametrize("text", ["Room R2 is upstairs", "route r12 at 12.50"])
def test_a_letter_r_before_a_small_number_is_no_rand(text):
    assert not [k for k in _keys(text) if k.startswith("money")]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        # Months are a twelfth of a year, so "12 months" and "1 year" are one span.
        ("a 12-month contract", "duration:518400"),
        ("1 year", "duration:518400"),
        ("a 12-year warranty", "duration:6220800"),
        ("six months", "duration:259200"),
    ],
)
def test_months_and_years_are_spans(text, key):
    assert _keys(text) == [key]


@pytest.mark.parametrize("text", ["my son is 8 years old", "a 5-year-old", "over 2 years of age"])
def test_an_age_is_no_span(text):
    assert not [k for k in _keys(text) if k.startswith("duration")]


def test_number_words_that_are_not_amounts_are_no_facts():
    assert _keys("two adults and one child, ten fifteen, O2 signal") == []
