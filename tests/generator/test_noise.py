"""Noise: seeded, level-dependent, and it never changes or loses a value."""

from __future__ import annotations

import random
import re

import pytest

from generator import fixtures as fixtures_module
from generator import noise as noise_module
from generator.facts import canonical_values, critical_facts, missing_facts
from generator.fixtures import FactPreservationError, build_fixture, protected_words
from generator.noise import Noised, _Stats, apply_noise, typo_words
from generator.schemas import Fixture, FixtureDocument, NoiseLevel
from qalab.domain import OrgContext
from qalab.llm import NullLedger, OfflineEngine

SEEDS = range(30)


def _fixture(org, level, seed, key="fx-01", index=0):
    engine = OfflineEngine(ledger=NullLedger())
    return build_fixture(org, key=key, index=index, level=level, seed=seed, engine=engine)


FACT_SEEDS = range(200)


def test_it_keeps_every_critical_fact_over_200_seeds(org):
    """Acceptance: across >= 200 seeds no fixture loses a critical manifest fact (each price,
    hour, contact detail, critical policy value), at both noisy levels in turn."""
    facts = critical_facts(org)
    assert facts
    for seed in FACT_SEEDS:
        level = "messy" if seed % 2 else "semi_noisy"
        fixture = _fixture(org, level, seed, index=seed % 5)
        assert missing_facts(fixture.text, facts) == [], (seed, level)
        assert fixture.line_count >= 200


@pytest.mark.parametrize("level", ["semi_noisy", "messy"])
def test_it_never_introduces_or_changes_a_value(org, level):
    for seed in SEEDS:
        clean = _fixture(org, "clean", seed)
        noisy = _fixture(org, level, seed)
        assert noisy.text != clean.text
        added = canonical_values(noisy.text) - canonical_values(clean.text)
        assert added == set(), (seed, level, added)


def test_it_keeps_each_documents_values_in_that_document(org):
    # Per document, not per fixture: a value may not move, appear or vanish. Only the numbers of
    # dropped list markers ("1.") may go.
    for seed in SEEDS:
        clean = {d.id: d.text for d in _fixture(org, "clean", seed).documents}
        for doc in _fixture(org, "messy", seed).documents:
            before, after = canonical_values(clean[doc.id]), canonical_values(doc.text)
            assert after <= before, (seed, doc.id, after - before)
            assert all(v.startswith("int:") for v in before - after), (seed, before - after)


def test_it_leaves_clean_fixtures_untouched(org):
    fixture = _fixture(org, "clean", 3)
    assert fixture.metrics["typo_rate"] == 0.0
    assert fixture.metrics["structure_score"] == 1.0
    assert "| --- |" not in fixture.text


def test_it_adds_more_noise_at_the_messy_level(org):
    semi = [_fixture(org, "semi_noisy", s).metrics for s in range(10)]
    messy = [_fixture(org, "messy", s).metrics for s in range(10)]

    def mean(rows, key):
        return sum(r[key] for r in rows) / len(rows)

    clean = [_fixture(org, "clean", s).metrics for s in range(10)]
    assert mean(messy, "typo_rate") > mean(semi, "typo_rate") > mean(clean, "typo_rate") == 0
    assert mean(messy, "structure_score") < mean(semi, "structure_score") < 1
    assert mean(clean, "structure_score") == 1
    assert mean(messy, "duplicated_line_share") > mean(semi, "duplicated_line_share")


def test_it_never_misspells_protected_words(demo):
    protected = protected_words(demo)
    line = "Teeth whitening at Harbour Lane Dental: our hygienist explains everything carefully"
    rng = random.Random(1)
    for _ in range(200):
        out = typo_words(line, 1.0, rng, protected, _Stats())
        assert "Teeth whitening" in out and "Harbour Lane Dental" in out
    assert typo_words(line, 1.0, rng, protected, _Stats()) != line


def test_it_is_seeded():
    doc = FixtureDocument(
        id="d",
        title="T",
        text="\n".join(f"- Item number {i}: a fairly ordinary sentence here" for i in range(60)),
    )
    a = apply_noise([doc], "messy", random.Random(5))
    b = apply_noise([doc], "messy", random.Random(5))
    c = apply_noise([doc], "messy", random.Random(6))
    assert a == b and a.documents != c.documents and a.planted != c.planted


def test_it_retries_and_then_fails_when_noise_destroys_a_fact(demo, monkeypatch):
    calls = []

    def destructive(documents, level, rng, *, protected=frozenset()):
        calls.append(level)
        wiped = [d.model_copy(update={"text": re.sub(r"\d", "#", d.text)}) for d in documents]
        return Noised(wiped, {"typo_rate": 0.0, "structure_score": 1.0}, [])

    monkeypatch.setattr(fixtures_module, "apply_noise", destructive)
    with pytest.raises(FactPreservationError, match="price of"):
        _fixture(demo, "messy", 1)
    assert len(calls) == fixtures_module.NOISE_ATTEMPTS


def test_it_accepts_a_later_attempt_when_the_first_loses_a_fact(demo, monkeypatch):
    real = fixtures_module.apply_noise
    attempts = []

    def flaky(documents, level, rng, *, protected=frozenset()):
        attempts.append(1)
        docs, metrics, planted = real(documents, level, rng, protected=protected)
        if len(attempts) == 1:
            docs = [d.model_copy(update={"text": d.text.replace("08:30", "")}) for d in docs]
            docs = [d.model_copy(update={"text": re.sub(r"0?8[.:]30", "", d.text)}) for d in docs]
        return Noised(docs, metrics, planted)

    monkeypatch.setattr(fixtures_module, "apply_noise", flaky)
    fixture = _fixture(demo, "messy", 1)
    assert len(attempts) == 2
    assert fixture.metrics["noise_attempt"] == 1.0


# --------------------------------------------------------------------------- planted noise


def _word_in(word: str, text: str) -> bool:
    return (
        re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE) is not None
    )


@pytest.mark.parametrize("level", ["semi_noisy", "messy"])
def test_it_records_every_typo_it_planted_and_each_is_in_the_fixture(
    org: OrgContext, level: NoiseLevel
) -> None:
    for seed in range(15):
        clean = _fixture(org, "clean", seed)
        fixture = _fixture(org, level, seed)
        typos = [p for p in fixture.noise if p.kind == "typo"]
        assert typos, (seed, level)
        keys = [(p.kind, p.text.casefold()) for p in fixture.noise]
        assert len(keys) == len(set(keys)), "one entry per distinct noisy form"
        for planted in fixture.noise:
            assert planted.text != planted.clean
            if planted.kind == "typo":
                assert _word_in(planted.text, fixture.text), (seed, planted)
                assert not _word_in(planted.text, clean.text), (seed, planted)
                assert _word_in(planted.clean, clean.text), (seed, planted)
            elif planted.text == "|":  # cells of a table row run together without the row
                lines = fixture.text.splitlines()
                assert any(" | " in x and not x.lstrip().startswith("|") for x in lines)
            else:  # a list marker swapped for another
                lines = fixture.text.splitlines()
                assert any(x.lstrip().startswith(planted.text) for x in lines), planted
        # Every misspelt word of the fixture is on the record: the words the fixture has and the
        # clean one does not are exactly the recorded typos (money re-rendered as "80 euro" or
        # "EUR 80" aside: that is a format, not a word).
        clean_words = {w.casefold() for w in re.findall(r"[A-Za-z]+", clean.text)}
        clean_words |= {"euro", "eur", "usd", "gbp"}
        new_words = {w.casefold() for w in re.findall(r"[A-Za-z]+", fixture.text)} - clean_words
        assert new_words == {p.text.casefold() for p in typos}, seed


def test_it_records_nothing_for_a_clean_fixture(org: OrgContext) -> None:
    assert _fixture(org, "clean", 3).noise == []


def test_the_record_is_seeded(demo: OrgContext) -> None:
    assert _fixture(demo, "messy", 4).noise == _fixture(demo, "messy", 4).noise
    assert _fixture(demo, "messy", 4).noise != _fixture(demo, "messy", 5).noise


def test_it_records_the_debris_marks_it_plants() -> None:
    lines = [f"- Item number {i}: a fairly ordinary sentence here" for i in range(40)]
    lines += ["| Item | Price |", "|---|---|"] + [f"| Thing {i} | {i} EUR |" for i in range(40)]
    doc = FixtureDocument(id="d", title="T", text="\n".join(lines))
    marks: set[tuple[str, str]] = set()
    for seed in range(10):
        docs, _, planted = apply_noise([doc], "messy", random.Random(seed))
        for p in planted:
            if p.kind == "markup":
                assert p.text in docs[0].text
                marks.add((p.text, p.clean))
    assert marks == {("•", "-"), ("*", "-"), ("|", "")}


def test_a_typo_that_spells_a_word_of_the_kb_is_not_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "trial" -> "trail" in a KB that speaks of trails is indistinguishable from "trail".
    slips = {"trial": "trail", "booking": "bookign"}
    monkeypatch.setattr(noise_module, "_typo", lambda word, rng: slips.get(word, word))
    stats = _Stats(vocabulary=frozenset({"trail", "trial", "booking"}))
    out = typo_words("trial booking", 1.0, random.Random(1), frozenset(), stats)
    assert out == "trail bookign"
    assert [(p.text, p.clean) for p in stats.planted.values()] == [("bookign", "booking")]


def test_a_fixture_stored_before_the_record_still_loads() -> None:
    fixture = Fixture.model_validate(
        {"key": "fx-01", "noise_level": "messy", "documents": [], "metrics": {}}
    )
    assert fixture.noise == []
