"""Retrieval: passages of KB entries, BM25 search, dedupe, fuzzy vocabulary and the index cache."""

from __future__ import annotations

import pytest

from runs.simulator.contract import KbEntry
from runs.simulator.retrieval import (
    PASSAGE_LINES,
    KbIndex,
    content_words,
    kb_index,
    stem,
)
from tests.simulator.helpers import KB


def _index(*texts: str) -> KbIndex:
    return KbIndex(
        tuple(KbEntry(id=f"d{n}", title=f"Doc {n}", text=t) for n, t in enumerate(texts))
    )


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("emergencies", "emergency"),
        ("prices", "price"),
        ("fillings", "filling"),
        ("glass", "glass"),
        ("bonus", "bonus"),
        ("analysis", "analysis"),
        ("has", "has"),
        ("price", "price"),
    ],
)
def test_stem_drops_plural_endings_only(word, stemmed):
    assert stem(word) == stemmed


def test_content_words_drop_stopwords_and_stem():
    assert content_words("How much are your Prices for EMERGENCIES?") == ["price", "emergency"]
    assert content_words("hi, can i book a hygiene clean pls") == ["book", "hygiene", "clean"]
    assert content_words("is it ok?") == []


def test_a_heading_is_joined_to_the_block_below_it():
    index = _index(
        "## Fillings\n\nTooth-coloured filling | 120 EUR | 45 min\n\n"
        "HYGIENE CLEAN:\n\nScale and polish by a hygienist, 80 EUR."
    )
    texts = [p.text for p in index.passages]
    assert texts == [
        "## Fillings\nTooth-coloured filling | 120 EUR | 45 min",
        "HYGIENE CLEAN:\nScale and polish by a hygienist, 80 EUR.",
    ]
    assert all(p.doc_id == "d0" and p.title == "Doc 0" for p in index.passages)


def test_a_heading_belongs_to_one_block_only():
    index = _index("## Prices\n\nHygiene clean | 80 EUR\n\nParking is free behind the building.")
    assert [p.text for p in index.passages] == [
        "## Prices\nHygiene clean | 80 EUR",
        "Parking is free behind the building.",
    ]


def test_a_short_line_with_a_figure_is_content_not_a_heading():
    index = _index("Mon-Thu: 08:30 to 18:00\n\nFri: 08:30 to 16:00")
    assert [p.text for p in index.passages] == ["Mon-Thu: 08:30 to 18:00", "Fri: 08:30 to 16:00"]


def test_a_long_block_is_cut_into_pieces_that_each_keep_the_heading():
    rows = [f"Service {n} | {10 * n} EUR | {n} min" for n in range(1, PASSAGE_LINES + 3)]
    index = _index("## Price list\n\n" + "\n".join(rows))
    assert [p.text.splitlines() for p in index.passages] == [
        ["## Price list", *rows[:PASSAGE_LINES]],
        ["## Price list", *rows[PASSAGE_LINES:]],
    ]


def test_search_ranks_the_passage_that_answers_first():
    index = KbIndex(tuple(KB))
    hits = index.search("how much is a hygiene clean?")
    assert hits, "a question naming a service in the price list must retrieve it"
    score, top = hits[0]
    assert top.doc_id == "prices"
    assert "Hygiene clean | 80 EUR | 45 min" in top.text
    assert score > 0
    assert [s for s, _ in hits] == sorted((s for s, _ in hits), reverse=True)

    _, top = index.search("cancellation fee")[0]
    assert top.doc_id == "policies"


def test_search_returns_nothing_for_stopwords_unknown_words_or_an_empty_kb():
    index = KbIndex(tuple(KB))
    assert index.search("is it ok?") == []
    assert index.search("zeppelin") == []
    assert KbIndex(()).search("hygiene clean") == []
    assert len(index.search("clean exam filling price eur", k=2)) == 2


def test_a_repeated_paragraph_is_retrieved_once():
    parking = "Free parking for patients behind the building."
    index = _index(
        f"## Visiting\n\n{parking}",
        "Hygiene clean | 80 EUR | 45 min",
        f"## Visiting\n\n{parking}",
        "Mon-Thu: 08:30 to 18:00",
        "Closed on Sunday and bank holidays.",
    )
    assert [p.text for p in index.passages].count(f"## Visiting\n{parking}") == 2
    hits = index.search("is there parking for patients?", k=3)
    assert [p.text for _, p in hits] == [f"## Visiting\n{parking}"]


def test_knows_the_kb_vocabulary_and_close_typos_of_it():
    index = KbIndex(tuple(KB))
    assert index.knows("hygiene")
    assert index.knows("cancellation")
    assert index.knows("hygeine")  # a customer's typo
    assert index.knows("cancelation")
    assert index.knows("fillin")  # a prefix of a known word
    assert index.knows("hygienist")  # shares its first five letters with "hygiene"
    assert index.knows("2026")  # figures are never "unknown"
    assert not index.knows("sedation")
    assert not index.knows("dentistry")
    assert not index.knows("orthodontic")


def test_kb_index_is_built_once_per_distinct_kb_content():
    kb = [KbEntry(id="a", title="A", text="Hygiene clean | 80 EUR | 45 min")]
    same = [KbEntry(id="a", title="A", text="Hygiene clean | 80 EUR | 45 min")]
    other = [KbEntry(id="a", title="A", text="Hygiene clean | 85 EUR | 45 min")]
    first = kb_index(kb)
    assert kb_index(same) is first
    assert kb_index(other) is not first
    assert "85" in kb_index(other).vocabulary and "85" not in first.vocabulary


def test_kb_index_forgets_the_least_recently_used_kb():
    def kb(n):
        return [KbEntry(id="x", title="X", text=f"Lru case {n} | {n} EUR")]

    oldest, kept = kb_index(kb(-1)), kb_index(kb(-2))
    for n in range(40):
        kb_index(kb(n))
        kb_index(kb(-2))  # used all along: stays cached
    assert kb_index(kb(-2)) is kept
    assert kb_index(kb(-1)) is not oldest
