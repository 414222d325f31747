"""Noise: seeded, level-dependent, and it never changes or loses a value."""

from __future__ import annotations

import random
import re

import pytest

from generator import fixtures as fixtures_module
from generator.facts import canonical_values, critical_facts, missing_facts
from generator.fixtures import FactPreservationError, build_fixture, protected_words
from generator.noise import apply_noise, typo_words
from generator.schemas import FixtureDocument
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
    from generator.noise import _Stats

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
    a, _ = apply_noise([doc], "messy", random.Random(5))
    b, _ = apply_noise([doc], "messy", random.Random(5))
    c, _ = apply_noise([doc], "messy", random.Random(6))
    assert a == b and a != c


def test_it_retries_and_then_fails_when_noise_destroys_a_fact(demo, monkeypatch):
    calls = []

    def destructive(documents, level, rng, *, protected=frozenset()):
        calls.append(level)
        wiped = [d.model_copy(update={"text": re.sub(r"\d", "#", d.text)}) for d in documents]
        return wiped, {"typo_rate": 0.0, "structure_score": 1.0}

    monkeypatch.setattr(fixtures_module, "apply_noise", destructive)
    with pytest.raises(FactPreservationError, match="price of"):
        _fixture(demo, "messy", 1)
    assert len(calls) == fixtures_module.NOISE_ATTEMPTS


def test_it_accepts_a_later_attempt_when_the_first_loses_a_fact(demo, monkeypatch):
    real = fixtures_module.apply_noise
    attempts = []

    def flaky(documents, level, rng, *, protected=frozenset()):
        attempts.append(1)
        docs, metrics = real(documents, level, rng, protected=protected)
        if len(attempts) == 1:
            docs = [d.model_copy(update={"text": d.text.replace("08:30", "")}) for d in docs]
            docs = [d.model_copy(update={"text": re.sub(r"0?8[.:]30", "", d.text)}) for d in docs]
        return docs, metrics

    monkeypatch.setattr(fixtures_module, "apply_noise", flaky)
    fixture = _fixture(demo, "messy", 1)
    assert len(attempts) == 2
    assert fixture.metrics["noise_attempt"] == 1.0
