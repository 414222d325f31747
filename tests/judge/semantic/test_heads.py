"""The shipped heads: small, readable, with their provenance, and deterministic."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from judge.semantic.heads import (
    FEATURES,
    HEAD_NAMES,
    HeadError,
    head_from_document,
    head_sha256,
    lexical_features,
    load_head,
)


@pytest.mark.parametrize("name", HEAD_NAMES)
def test_each_head_ships_small_with_its_provenance(name):
    path = resources.files("judge.semantic") / "heads" / f"{name}.json"
    assert len(path.read_bytes()) < 16_000  # a few KB
    head = load_head(name)
    assert head.weights.shape == (FEATURES,) and 0 < head.threshold < 1
    provenance = head.provenance
    for key in ("training_data", "picked_on", "seed", "source_commit", "command", "encoder"):
        assert provenance.get(key), key
    data = provenance["training_data"]
    for item in data if isinstance(data, list) else [data]:
        assert item["licence"] and len(item["sha256"]) == 64 and item["records"] > 0
    assert provenance["picked_on"]["auroc"] > 0.7
    assert len(head_sha256(name)) == 64


def test_the_contradiction_head_records_decodes_missing_licence():
    [decode, own] = load_head("contradiction").provenance["training_data"]
    assert "no data licence" in decode["licence"]
    assert "project" in own["licence"]


def test_scores_are_deterministic_and_read_the_pair():
    head = load_head("contradiction")
    pairs = [
        ("We are open on Sundays.", "We are closed on Sundays."),
        ("We are open on Sundays.", "Yes, we open on Sundays from 10am."),
    ]
    first, second = head.score_pairs(pairs), head.score_pairs(list(reversed(pairs)))
    assert first == list(reversed(second))
    assert first[0] > first[1]


def test_lexical_features_are_bounded_on_any_text():
    for a, b in [("", ""), ("no " * 5000, "x" * 100_000), ("We can't.", "We can?")]:
        values = lexical_features(a, b)
        assert len(values) == 7 and all(0 <= v <= 1 for v in values)


@pytest.mark.parametrize(
    "document",
    [
        {},
        {"name": "x", "weights_f32le_base64": "!!", "bias": 0, "threshold": 0.5},
        {"name": "x", "weights_f32le_base64": "AAAAAA==", "bias": 0, "threshold": 0.5},
    ],
)
def test_a_head_file_that_does_not_read_is_a_clear_error(document):
    with pytest.raises(HeadError):
        head_from_document(json.loads(json.dumps(document)))


def test_an_unknown_head_is_a_clear_error():
    with pytest.raises(HeadError, match="unknown head"):
        load_head("sarcasm")
