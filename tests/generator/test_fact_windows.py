"""`find_fact` / `missing_facts` read a text once for all facts (a fixture carries the whole KB):
they answer exactly as the plain definition, each fact's value searched in the whole text and an
anchored one in every window of lines, normalised window by window."""

from __future__ import annotations

import random

import pytest

from generator.facts import Fact, find_fact, missing_facts
from generator.facts.critical import _norm, _value_in


def _reference(text: str, fact: Fact, window: int = 3) -> bool:
    if not fact.anchor:
        return _value_in(text, fact)
    anchor = _norm(fact.anchor)
    lines = text.splitlines()
    return any(
        anchor in _norm(" ".join(lines[i : i + window]))
        and _value_in(" ".join(lines[i : i + window]), fact)
        for i in range(len(lines))
    )


FACTS = [
    Fact("money", "80", "price of Hygiene clean", "s", anchor="Hygiene clean"),
    Fact("money", "12.50", "price of Strasse", "s", anchor="Straße"),
    Fact("time", "08:30", "opens", "s"),
    Fact("time", "21:00", "closes", "s", anchor="clean"),
    Fact("phone", "35315550142", "phone", "s"),
    Fact("email", "x@y.ie", "email", "s"),
    Fact("number", "24", "policy", "s"),
    Fact("number", "024", "policy", "s"),
    Fact("number", "555", "policy", "s", anchor="ab"),
]
TOKENS = [
    "Hygiene", "hygiene clean", "clean", "|", "**", "#", "_", "`", "80", "80.00", "€80", "80 EUR",
    "EUR", "12,50", "£6O", "8.30", "08:30", "8:30am", "9pm", "+353", "1", "555", "0142",
    "x@y.ie", "X@Y.IE", "24", "STRASSE", "Straße", "ab", "-", ",", "\t", "\u00a0", "\u2028",
    "\x0b", "\r\n", "\n", "\n", "\n\n", " ", "  ",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(2))
def test_it_answers_as_the_plain_definition(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(250):
        text = "".join(
            rng.choice(TOKENS) + rng.choice(["", " ", "\n"]) for _ in range(rng.randrange(60))
        )
        expected = [f for f in FACTS if not _reference(text, f)]
        assert missing_facts(text, FACTS) == expected, repr(text)
        for fact in FACTS:
            for window in (1, 2, 3):
                assert find_fact(text, fact, window=window) == _reference(text, fact, window), (
                    repr(text),
                    fact,
                    window,
                )


def test_an_anchor_split_over_lines_and_markup_is_found() -> None:
    fact = FACTS[0]
    assert find_fact("| **Hygiene** |\n| `clean` | €80 |", fact)
    assert find_fact("HYGIENE\n\nclean 80 EUR", fact)
    assert not find_fact("Hygiene\n\n\nclean 80 EUR", fact)  # the anchor is not in 3 lines
    assert missing_facts("Hygiene clean 80 EUR\n8.30", FACTS[:3]) == [FACTS[1]]
