"""The facts of a clause are found by bisection over the text's facts (a scan of every fact per
clause was quadratic on a big KB): the same facts, in the same order, as the plain filter."""

from __future__ import annotations

import random

from judge.claims.segments import FactSpans, facts_in
from judge.facts import Fact, extract_facts


def _plain(facts: list[Fact], start: int, end: int, kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind and start <= f.start < end]


def test_it_finds_the_same_facts_as_the_plain_filter() -> None:
    rng = random.Random(5)
    kinds = ("money", "time", "duration")
    for _ in range(200):
        facts = sorted(
            (
                Fact(rng.choice(kinds), str(n), start, start + rng.randrange(1, 6))
                for n, start in enumerate(rng.randrange(80) for _ in range(rng.randrange(30)))
            ),
            key=lambda f: f.start,  # extract_facts' order: by start, ties as found
        )
        index = FactSpans.of(facts)
        for _ in range(30):
            start = rng.randrange(-5, 90)
            end = start + rng.randrange(-3, 40)
            kind = rng.choice((*kinds, "phone"))
            assert facts_in(index, start, end, kind) == _plain(facts, start, end, kind)


def test_it_reads_a_real_text() -> None:
    text = "Mon-Fri 8:30 to 18:00, a clean is 80 EUR and takes 45 min; Sat 9am-1pm, €95 or 30 min."
    facts = extract_facts(text)
    index = FactSpans.of(facts)
    for start in range(0, len(text), 7):
        for end in range(start, len(text) + 8, 9):
            for kind in ("money", "time", "duration"):
                assert facts_in(index, start, end, kind) == _plain(facts, start, end, kind)
    assert [f.value for f in facts_in(index, 0, len(text), "money")] == ["80 EUR", "95 EUR"]
