"""The semantic layer's learned heads: small logistic regressions on pairs of sentence embeddings.

A head reads two texts (an earlier bot sentence and a later one; a customer message and the
bot's reply) as the features `[u, v, |u - v|, u * v, cos(u, v)]` of their embeddings (1,537
numbers) plus seven generic lexical signals of the pair (`lexical_features`: negation on
either side and whether exactly one side is negated, content-word overlap, overlap where the
negation differs, a question mark, length) and gives the probability of what it was trained to
see. Its weights, its default
threshold and its provenance (training data, licence, source commit, seed, dev metrics) ship
as a small JSON file in `judge/semantic/heads/`, written by `python -m judge.semantic.train`.

Heads:
- `contradiction`: the later text contradicts the earlier one (DECODE's train split);
- `takeup`: the reply does not take up the customer's message (ignores it, answers something
  else) - the project's own hand-written pairs;
- `refusal`: the reply refuses or deflects the customer's request instead of helping - the
  project's own hand-written pairs.

Pure and deterministic: same texts, same scores.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from judge.semantic.encoder import DIMENSION, get_encoder

HEAD_NAMES: tuple[str, ...] = ("contradiction", "takeup", "refusal")
LEXICAL = 7
FEATURES = 4 * DIMENSION + 1 + LEXICAL

# Generic English function words and negators (not chosen on any evaluation data).
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without)\b|n't\b", re.IGNORECASE
)
_WORD = re.compile(r"[a-z0-9']+")
_FUNCTION_WORDS = frozenset(
    [
        "i",
        "you",
        "he",
        "she",
        "it",
        "we",
        "they",
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "my",
        "your",
        "our",
        "this",
        "that",
        "there",
        "so",
        "just",
        "very",
        "really",
        "too",
        "also",
        "as",
        "if",
        "me",
        "them",
        "his",
        "her",
        "its",
        "their",
        "what",
        "which",
        "who",
        "how",
    ]
)


class HeadError(RuntimeError):
    """A head file that is missing or does not read."""


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """`[u, v, |u - v|, u * v, cos]` of two aligned batches of unit vectors [n, 384]."""
    u = np.atleast_2d(u).astype(np.float32)
    v = np.atleast_2d(v).astype(np.float32)
    cos = np.sum(u * v, axis=1, keepdims=True)
    return np.concatenate([u, v, np.abs(u - v), u * v, cos], axis=1)


def lexical_features(first: str, second: str) -> list[float]:
    """Seven cheap signals of a pair of texts, bounded to [0, 1] (the input is cut at 4,000
    characters, so the cost is bounded too)."""
    first, second = first[:4000], second[:4000]
    neg_first, neg_second = bool(_NEGATION.search(first)), bool(_NEGATION.search(second))
    words_first = set(_WORD.findall(first.lower())) - _FUNCTION_WORDS
    words_second = set(_WORD.findall(second.lower())) - _FUNCTION_WORDS
    overlap = len(words_first & words_second) / max(len(words_first | words_second), 1)
    flipped = neg_first != neg_second
    return [
        float(neg_first),
        float(neg_second),
        float(flipped),
        overlap,
        overlap * flipped,
        float("?" in second),
        min(len(words_second), 20) / 20,
    ]


def head_features(
    pairs: Sequence[tuple[str, str]], first: np.ndarray, second: np.ndarray
) -> np.ndarray:
    """The features a head reads: the embeddings' pair features and the lexical ones."""
    lexical = np.array([lexical_features(a, b) for a, b in pairs], dtype=np.float32)
    return np.concatenate([pair_features(first, second), lexical.reshape(len(pairs), LEXICAL)], 1)


def encode_weights(weights: np.ndarray) -> str:
    """Float32 little-endian weights as base64 (how a head file stores them)."""
    return base64.b64encode(np.asarray(weights, dtype="<f4").tobytes()).decode("ascii")


@dataclass(frozen=True)
class Head:
    name: str
    weights: np.ndarray
    bias: float
    threshold: float
    provenance: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """P(positive class) of each row of `features` [n, FEATURES]."""
        logits = features.astype(np.float64) @ self.weights.astype(np.float64) + self.bias
        return 1.0 / (1.0 + np.exp(-logits))

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The head's probability for each (first, second) pair of texts."""
        if not pairs:
            return []
        encoder = get_encoder()
        firsts = encoder.encode([a for a, _ in pairs])
        seconds = encoder.encode([b for _, b in pairs])
        return [float(p) for p in self.probabilities(head_features(pairs, firsts, seconds))]

    def as_document(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "features": "[u, v, |u-v|, u*v, cos] of all-MiniLM-L6-v2 embeddings + 7 lexical",
            "weights_f32le_base64": encode_weights(self.weights),
            "bias": self.bias,
            "threshold": self.threshold,
            "provenance": self.provenance,
        }


def head_from_document(document: dict[str, Any]) -> Head:
    """A head from the JSON document of its file; HeadError when it does not read."""
    try:
        raw = base64.b64decode(document["weights_f32le_base64"], validate=True)
        weights = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        head = Head(
            name=str(document["name"]),
            weights=weights,
            bias=float(document["bias"]),
            threshold=float(document["threshold"]),
            provenance=dict(document.get("provenance") or {}),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise HeadError(f"head file does not read: {type(exc).__name__}: {exc}") from None
    if weights.shape != (FEATURES,):
        raise HeadError(f"head {head.name!r} has {weights.shape[0]} weights, not {FEATURES}")
    return head


def _head_path(name: str) -> Any:
    if name not in HEAD_NAMES:
        raise HeadError(f"unknown head {name!r} (known: {', '.join(HEAD_NAMES)})")
    return resources.files("judge.semantic") / "heads" / f"{name}.json"


@cache
def head_sha256(name: str) -> str:
    """sha256 of the shipped head file `name` (a run's snapshot records it)."""
    return hashlib.sha256(_head_path(name).read_bytes()).hexdigest()


@cache
def load_head(name: str) -> Head:
    """The shipped head `name` (one of HEAD_NAMES), read once per process."""
    path = _head_path(name)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HeadError(f"head file judge/semantic/heads/{name}.json: {exc}") from None
    return head_from_document(document)
