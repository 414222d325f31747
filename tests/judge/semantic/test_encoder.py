"""The int8 ONNX encoder: shape, agreement with the fp32 model, determinism, cache."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from judge.semantic.encoder import CACHE_SIZE, DIMENSION, MAX_SEQ_LENGTH, EmbeddingCache
from tests.judge.semantic.conftest import ROOT

TEXTS = [
    "What are your opening hours on bank holidays?",
    "We're open 9am–5pm, Monday to Friday 😊",
    "ok",
    "",
    "Das Paket kostet 120 € inkl. MwSt.",
    "The deluxe cleaning costs £52 and takes about 1h 30.",
    "Can I cancel my appointment? My reference is BK-20931.",
    "Sorry, I can't help with that request.",
    "Sorry, I can't help with this request.",  # same token count as the one before
    "Hello, I booked a deep tissue massage for next Tuesday at 3pm but something came up.",
]


def test_vectors_are_float32_unit_rows_of_384(encoder):
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), DIMENSION) == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, DIMENSION)
    assert encoder.encode(("a tuple works too",)).shape == (1, DIMENSION)


def test_the_int8_encoder_agrees_with_the_fp32_reference(uncached, reference):
    """Cosine >= 0.99 for every stored sentence (measured: min 0.9963 on "Thanks so much!! 🙏🙏",
    mean 0.9993); the tokenizer gives the stored token ids, truncated to 256."""
    items = reference["sentences"]
    assert len(items) >= 30
    texts = [item["text"] for item in items]
    stored = np.array([item["embedding"] for item in items], dtype=np.float64)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    assert [list(e.ids) for e in uncached._tokenizer.encode_batch(texts)] == [
        item["input_ids"] for item in items
    ]
    assert max(len(item["input_ids"]) for item in items) == MAX_SEQ_LENGTH == 256
    cosines = np.sum(uncached.encode(texts).astype(np.float64) * stored, axis=1)
    low = {text: round(float(c), 5) for text, c in zip(texts, cosines, strict=True) if c < 0.99}
    assert low == {}
    assert cosines.mean() >= 0.998


def test_unrelated_texts_are_further_apart_than_paraphrases(encoder):
    hours, paraphrase, other = encoder.encode(
        [
            "What time do you open on Saturday?",
            "When are you open on Saturdays?",
            "My parcel arrived damaged and I want a refund.",
        ]
    )
    assert hours @ paraphrase > 0.8 > hours @ other + 0.3


def test_a_text_gets_the_same_bits_whatever_it_is_batched_with(uncached):
    """Texts are grouped by exact token count, so no batch is padded: a text's vector does not
    depend on the other texts of the call, their order, or the batch size."""
    together = uncached.encode(TEXTS)
    assert np.array_equal(uncached.encode(TEXTS), together)
    alone = np.stack([uncached.encode([text])[0] for text in TEXTS])
    assert np.array_equal(alone, together)
    order = list(range(len(TEXTS)))
    random.Random(7).shuffle(order)
    shuffled = uncached.encode([TEXTS[i] for i in order])
    assert np.array_equal(shuffled, together[order])
    # more than one batch of one token count, in a call with other lengths
    same_length = [f"Booking number {n} is confirmed." for n in range(100, 170)]
    crowd = uncached.encode(same_length + TEXTS)
    assert np.array_equal(crowd[len(same_length) :], together)
    assert np.array_equal(crowd[5], uncached.encode([same_length[5]])[0])
    duplicates = uncached.encode([TEXTS[0], TEXTS[1], TEXTS[0]])
    assert np.array_equal(duplicates[0], duplicates[2])
    assert np.array_equal(duplicates[0], together[0])


_OTHER_PROCESS = """
import json, sys
from judge.semantic import get_encoder
print(json.dumps(get_encoder().encode(json.loads(sys.stdin.read())).tobytes().hex()))
"""


def test_another_process_gets_the_same_bits(encoder):
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS],
        input=json.dumps(TEXTS),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    theirs = np.frombuffer(bytes.fromhex(json.loads(done.stdout)), dtype=np.float32)
    assert np.array_equal(theirs.reshape(len(TEXTS), DIMENSION), encoder.encode(TEXTS))


def test_the_cache_returns_the_same_vectors_and_cannot_be_changed_by_a_caller(encoder, uncached):
    texts = ["Is parking available near the Kings Cross branch?", "Is there parking nearby?"]
    before = encoder.cache_info()
    first = encoder.encode(texts)
    first[:] = 0.0  # the caller owns the array it got
    second = encoder.encode(texts)
    assert np.array_equal(second, uncached.encode(texts))
    after = encoder.cache_info()
    assert after.hits >= before.hits + 2
    assert after.maxsize == CACHE_SIZE
    assert after.size <= after.maxsize


def test_the_cache_is_a_bounded_lru():
    cache = EmbeddingCache(maxsize=3)
    vectors = {t: np.full(DIMENSION, i, dtype=np.float32) for i, t in enumerate("abcde")}
    for text in "abc":
        cache.put(text, vectors[text])
    assert cache.get("a") is not None  # "a" is now the most recent
    cache.put("d", vectors["d"])
    cache.put("e", vectors["e"])
    assert cache.info().size == 3
    assert cache.get("b") is None and cache.get("c") is None
    assert np.array_equal(cache.get("a"), vectors["a"])
    kept = cache.get("e")
    with pytest.raises(ValueError, match="read-only"):
        kept[0] = 9.0
    info = cache.info()
    assert (info.hits, info.misses, info.size, info.maxsize) == (3, 2, 3, 3)
    cache.clear()
    assert cache.info().size == 0
    off = EmbeddingCache(maxsize=0)
    off.put("a", vectors["a"])
    assert off.get("a") is None and off.info().size == 0


def test_a_call_of_long_texts_is_split_by_tokens_and_gives_the_same_bits(uncached, monkeypatch):
    """Working memory grows with batch x length: no onnxruntime call holds more than
    MAX_BATCH_TOKENS tokens (a single text up to MAX_SEQ_LENGTH always fits), and splitting
    changes no bit."""
    from judge.semantic import encoder as module

    long_texts = [f"Order {n}: " + "the parcel is on its way to you now. " * 40 for n in range(12)]
    alone = np.stack([uncached.encode([text])[0] for text in long_texts])
    uncached.cache_clear()
    shapes: list[tuple[int, ...]] = []
    run = module.Encoder._run

    def spy(self, ids):
        shapes.append(ids.shape)
        return run(self, ids)

    monkeypatch.setattr(module.Encoder, "_run", spy)
    together = uncached.encode(long_texts)
    assert np.array_equal(together, alone)
    assert len(shapes) > 1 and all(
        rows * length <= module.MAX_BATCH_TOKENS for rows, length in shapes
    )
    assert max(length for _, length in shapes) == module.MAX_SEQ_LENGTH  # truncated, not dropped
