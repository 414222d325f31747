"""Fact helpers: money/time/phone normalisation and recoverability checks."""

from __future__ import annotations

from decimal import Decimal

import pytest

from generator.facts import (
    Fact,
    canonical_values,
    critical_facts,
    find_fact,
    missing_facts,
    normalize_money,
    normalize_time,
    policy_facts,
)


@pytest.mark.parametrize(
    "text",
    ["80 EUR", "EUR 80", "80€", "€80", "80.00 EUR", "80,00 €", "80 euro", "costs EUR 80 today"],
)
def test_it_reads_every_shape_of_the_same_amount(text):
    assert normalize_money(text) == Decimal("80")


def test_it_reads_decimal_and_thousands_amounts():
    assert normalize_money("12,50 €") == Decimal("12.50")
    assert normalize_money("EUR 1,200.50") == Decimal("1200.50")
    assert normalize_money("no money here, 80 people") is None


def test_it_reads_times_in_both_separators():
    assert normalize_time("open 8.30 until") == "08:30"
    assert normalize_time("08:30") == "08:30"
    assert normalize_time("12.50 EUR".replace("EUR", "")) == "12:50"
    assert normalize_time("no time") is None


def test_it_finds_a_price_only_next_to_its_service():
    fact = Fact("money", "80", "price of Hygiene clean", "org.yaml:services[1]", "Hygiene clean")
    assert find_fact("| Hygiene clean | €80 | 45 min |", fact)
    assert find_fact("Hygiene\nclean costs\n80.00 EUR", fact)
    assert not find_fact("Hygiene clean costs 65 EUR\n\n\n\nWhitening 80 EUR", fact)


def test_it_does_not_read_an_amount_as_a_time():
    fact = Fact("time", "12:50", "x", "x")
    assert not find_fact("Puncture repair 12.50 EUR", fact)
    assert find_fact("opens 12.50", fact)


def test_it_matches_phones_whatever_the_separators():
    fact = Fact("phone", "35315550142", "phone", "org.yaml:contact.phone")
    for text in ("+353 1 555 0142", "+353-1-555-0142", "call +35315550142 now"):
        assert find_fact(text, fact), text
    assert not find_fact("+353 1 555 0143", fact)


def test_it_lists_every_critical_fact_of_the_demo_org(demo):
    facts = critical_facts(demo)
    prices = {f.value for f in facts if f.kind == "money" and f.anchor}
    assert prices == {"65", "80", "120", "350", "95", "40", "150"}
    times = {f.value for f in facts if f.kind == "time"}
    assert times == {"08:30", "18:00", "16:00", "09:00", "13:00"}
    assert Fact("number", "24", "policy cancellation", "org.yaml:policies[0]") in facts
    assert any(f.kind == "money" and f.value == "30" and not f.anchor for f in facts)
    assert any(f.kind == "email" for f in facts) and any(f.kind == "phone" for f in facts)


def test_it_extracts_the_values_of_a_policy():
    facts = policy_facts(
        "Cancel 24 hours ahead or pay 30 EUR; call +353 1 555 0142.", label="p", source="s"
    )
    assert {(f.kind, f.value) for f in facts} == {
        ("money", "30"),
        ("number", "24"),
        ("phone", "35315550142"),
    }


def test_it_reports_missing_facts(demo):
    facts = critical_facts(demo)
    assert missing_facts("nothing at all", facts) == facts


def test_it_canonicalises_values_across_formats():
    clean = canonical_values("Hygiene clean 80 EUR, opens 08:30, call +353 1 555 0142, 24 hours")
    noisy = canonical_values("Hygeine clean €80, opens 8.30, call +35315550142, 24 hours")
    assert noisy == clean
    assert canonical_values("opens 8.31") - clean == {"time:08:31"}
