"""One reader (`qalab.values`, re-exported by `generator.facts`) for the forms org folders write
prices and durations in: the judge reads the org's words and the canonical form as the same
fact, the fact check finds them (a free service's "free" included), and noise keeps them."""

from __future__ import annotations

import random

import pytest

from generator.facts import Fact, canonical_values, missing_facts
from generator.noise import apply_noise
from generator.schemas import FixtureDocument
from judge.facts import extract_facts


def _read(text: str, kind: str) -> list[str]:
    return [f.value for f in extract_facts(text) if f.kind == kind]


# (a bot's words, the KB's words, the one fact both are)
SAME_PRICE = [
    ("It's £52.", "Ladies cut 52 GBP", "52 GBP"),
    ("That's EUR 45.", "45 € per session", "45 EUR"),
    ("It is 45,50 €.", "45.50 EUR", "45.50 EUR"),
    ("It costs €1,234.50.", "1.234,50 €", "1234.50 EUR"),
    ("It is CHF 120.- all in.", "120 CHF", "120 CHF"),
    ("Hosen kürzen: Fr. 45.–", "45 CHF", "45 CHF"),
    ("Just $9.99!", "9.99 USD", "9.99 USD"),
    ("It is ¥3000.", "3000 JPY", "3000 JPY"),
    ("A$89 per visit", "89 AUD", "89 AUD"),
    ("It's 15 000 Ft.", "15000 HUF", "15000 HUF"),
    ("From 695 kr.", "695 SEK", "695 KR"),
]


def test_the_judge_reads_a_bot_price_and_the_kb_price_as_one_fact() -> None:
    wrong = [
        (bot, kb, _read(bot, "money"), _read(kb, "money"))
        for bot, kb, value in SAME_PRICE
        if _read(bot, "money") != [value] or _read(kb, "money") != [value]
    ]
    assert wrong == []


RANGES = [
    ("Balayage 80–120 €", ["80 EUR", "120 EUR"]),
    ("Balayage €80-120.", ["80 EUR", "120 EUR"]),
    ("£40 - £60", ["40 GBP", "60 GBP"]),
    ("25 to 35 GBP", ["25 GBP", "35 GBP"]),
    ("CHF 80.- bis 150.-", ["80 CHF", "150 CHF"]),
    # Not ranges: the second number is no higher, or counts something else.
    ("Atelier croissants - 45,50 € - 3 heures.", ["45.50 EUR"]),
    ("€20 - 30 people max", ["20 EUR"]),
    ("5-10 minutes, then 20 €", ["20 EUR"]),
]


def test_it_reads_both_ends_of_a_range_written_with_one_currency() -> None:
    wrong = [
        (text, _read(text, "money")) for text, values in RANGES if _read(text, "money") != values
    ]
    assert wrong == []


DURATIONS = [
    ("about 1h 30", ["90"]),
    ("1h30 in the chair", ["90"]),
    ("1 hr 30 mins", ["90"]),
    ("1 Std. 30 Min.", ["90"]),
    ("90 Minuten", ["90"]),
    ("1,5 Stunden", ["90"]),
    ("2 heures", ["120"]),
    ("45 minutos", ["45"]),
    ("1.5 hours", ["90"]),
    ("1h 30 days", ["60", "43200"]),  # minutes after a space must end the span
]


def test_it_reads_durations_in_the_forms_org_folders_use() -> None:
    wrong = [
        (t, _read(t, "duration")) for t, minutes in DURATIONS if _read(t, "duration") != minutes
    ]
    assert wrong == []


@pytest.mark.parametrize("word", ["free", "Free of charge", "gratis", "gratuit", "kostenlos"])
def test_the_fact_check_finds_a_free_price(word: str) -> None:
    fact = Fact("money", "0", "price of Fringe trim", "org.yaml:services[5]", anchor="Fringe trim")
    assert missing_facts(f"Fringe trim: {word} for clients.", [fact]) == []
    assert missing_facts("Fringe trim: ask us.", [fact]) == [fact]


# An org's words for a price and every amount they hold.
PRICE_LINES = [
    ("£52", {"52"}),
    ("from €80", {"80"}),
    ("ab 80 €", {"80"}),
    ("80–120 €", {"80", "120"}),
    ("€80-120", {"80", "120"}),
    ("45,50 €", {"45.50"}),
    ("CHF 80.- bis 150.-", {"80", "150"}),
    ("$189.99+", {"189.99"}),
    ("starting at $149", {"149"}),
    ("1.234,50 €", {"1234.50"}),
]


def _amounts(text: str) -> set[str]:
    return {v.removeprefix("money:") for v in canonical_values(text) if v.startswith("money:")}


def test_noise_keeps_every_amount_of_the_org_words() -> None:
    for written, amounts in PRICE_LINES:
        doc = FixtureDocument(id="prices", title="Prices", text=f"Prices\n- Service | {written}\n")
        assert _amounts(doc.text) == amounts, written
        for seed in range(40):
            noisy = apply_noise([doc], "messy", random.Random(seed)).documents[0].text
            assert _amounts(noisy) == amounts, noisy
