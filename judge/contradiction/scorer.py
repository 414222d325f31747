"""The contradiction score: features of an utterance against the same speaker's earlier
turns, and the fitted logistic model over them (see the package docstring)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from judge.contradiction.clauses import (
    Clause,
    clauses,
    has_antonym,
    is_negation,
    split_words,
)
from judge.contradiction.lexicons import FIRST_PERSON, REJECTION, STOPWORDS
from judge.support import stem

DECISION_THRESHOLD = 0.5

# Fitted on the DECODE dev tune part (see the package docstring); P(contradiction) = sigmoid(z).
INTERCEPT = 0.78
COEFFICIENTS: dict[str, float] = {
    "aligned": 1.18,
    "topic": 1.07,
    "negation_flip": 1.26,
    "stance_flip": 0.76,
    "antonym": 1.12,
    "restatement": -1.34,
    "context_topic": 0.60,
    "context_flip": 0.55,
    "negated": 1.30,
    "negative_stance": 1.62,
    "rejection": 0.10,
    "aligned_negated": -0.87,
    "aligned_negative_stance": -1.05,
    "aligned_rejection": 1.09,
    "question": -2.57,
    "first_person": 0.93,
    "novel": -1.78,
    "answers_question": -1.14,
}


# --------------------------------------------------------------------------- features


@dataclass(frozen=True)
class Pair:
    """An utterance clause aligned with an earlier clause, and how they differ."""

    earlier_index: int  # index into `earlier`
    earlier: Clause
    later: Clause
    shared: frozenset[str]
    negation_flip: bool
    stance_flip: bool
    antonym: bool

    @property
    def overlap(self) -> float:
        """Share of the utterance clause's content found in the earlier clause."""
        return len(self.shared) / len(self.later.content)

    @property
    def flipped(self) -> bool:
        return self.negation_flip or self.stance_flip or self.antonym

    @property
    def weight(self) -> float:
        """This pair's part of the score (its flip terms), for picking the best pair."""
        return self.overlap * (
            COEFFICIENTS["negation_flip"] * self.negation_flip
            + COEFFICIENTS["stance_flip"] * self.stance_flip
            + COEFFICIENTS["antonym"] * self.antonym
        ) + 0.01 * len(self.shared)


@dataclass(frozen=True)
class Assessment:
    """The score of one utterance, its features, and the aligned pair that weighs most."""

    score: float
    features: dict[str, float]
    pair: Pair | None

    @property
    def contradiction(self) -> bool:
        return self.score >= DECISION_THRESHOLD


def aligned_pairs(earlier: Sequence[str], utterance: str | Sequence[Clause]) -> list[Pair]:
    """Every (utterance clause, earlier clause) pair that shares content; questions left out."""
    later = clauses(utterance) if isinstance(utterance, str) else list(utterance)
    pairs: list[Pair] = []
    for index, text in enumerate(earlier):
        for e in clauses(text):
            if e.question:
                continue
            for u in later:
                shared = u.content & e.content
                if u.question or not shared:
                    continue
                pairs.append(
                    Pair(
                        earlier_index=index,
                        earlier=e,
                        later=u,
                        shared=shared,
                        # "not painful" / "comfortable": the stances agree, no reversal
                        negation_flip=u.negated != e.negated and u.stance * e.stance <= 0,
                        stance_flip=u.stance * e.stance < 0,
                        antonym=has_antonym(u, e),
                    )
                )
    return pairs


def features(
    earlier: Sequence[str],
    utterance: str,
    *,
    contexts: Sequence[str] | None = None,
    prompt: str = "",
) -> tuple[dict[str, float], list[Pair]]:
    """The features of `utterance` against the same speaker's `earlier` turns (see the module
    docstring), and the aligned pairs they came from. `contexts[i]` is the other speaker's turn
    that `earlier[i]` answered ("" if none); `prompt` the other speaker's turn just before the
    utterance."""
    later = clauses(utterance)
    words = split_words(utterance)
    pairs = aligned_pairs(earlier, later)
    topic = max((min(len(p.shared), 3) / 3 for p in pairs), default=0.0)

    def best(kind: str) -> float:
        return max((p.overlap for p in pairs if getattr(p, kind)), default=0.0)

    context_topic = context_flip = 0.0
    for index, text in enumerate(earlier):
        context = contexts[index] if contexts and index < len(contexts) else ""
        own = [c for c in clauses(text) if not c.question]
        if not context or not own:
            continue
        own_content = frozenset().union(*(c.content for c in own))
        context_content = frozenset().union(*(c.content for c in clauses(context))) - own_content
        negated = any(c.negated for c in own)
        stance = sum(c.stance for c in own)
        for u in later:
            if u.question or u.content & own_content or not u.content & context_content:
                continue
            context_topic = 1.0
            if u.negated != negated or u.stance * stance < 0:
                context_flip = 1.0

    history = {stem(w) for text in earlier for w in split_words(text)}
    content = [w for w in words if len(w) > 2 and w not in STOPWORDS and not is_negation(w)]
    aligned = float(bool(pairs))
    negated = float(any(c.negated for c in later))
    negative_stance = float(any(c.stance < 0 for c in later))
    rejection = float(any(stem(w) in REJECTION for w in words))
    values = {
        "aligned": aligned,
        "topic": topic,
        "negation_flip": best("negation_flip"),
        "stance_flip": best("stance_flip"),
        "antonym": best("antonym"),
        "restatement": max((p.overlap for p in pairs if not p.flipped), default=0.0),
        "context_topic": context_topic,
        "context_flip": context_flip,
        "negated": negated,
        "negative_stance": negative_stance,
        "rejection": rejection,
        "aligned_negated": aligned * negated,
        "aligned_negative_stance": aligned * negative_stance,
        "aligned_rejection": aligned * rejection,
        "question": sum(c.question for c in later) / len(later) if later else 0.0,
        "first_person": float(any(w in FIRST_PERSON for w in words)),
        "novel": math.log1p(sum(stem(w) not in history for w in content)),
        "answers_question": float("?" in prompt),
    }
    return values, pairs


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def assess(
    earlier: Sequence[str],
    utterance: str,
    *,
    contexts: Sequence[str] | None = None,
    prompt: str = "",
) -> Assessment:
    """Score `utterance` against the same speaker's `earlier` turns (arguments as `features`)."""
    values, pairs = features(earlier, utterance, contexts=contexts, prompt=prompt)
    z = INTERCEPT + sum(COEFFICIENTS[name] * value for name, value in values.items())
    pair = max(pairs, key=lambda p: p.weight, default=None)
    return Assessment(score=_sigmoid(z), features=values, pair=pair)


def contradiction_score(
    earlier: list[str],
    utterance: str,
    *,
    contexts: Sequence[str] | None = None,
    prompt: str = "",
) -> tuple[float, str | None]:
    """P(`utterance` contradicts one of the same speaker's `earlier` turns), in [0, 1], and the
    earlier sentence it most likely contradicts (None when it shares no content with any).
    Contradiction when the score is >= DECISION_THRESHOLD."""
    result = assess(earlier, utterance, contexts=contexts, prompt=prompt)
    return result.score, result.pair.earlier.sentence if result.pair else None
