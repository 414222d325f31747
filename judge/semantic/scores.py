"""What the checks ask of the semantic layer: scores of a conversation's texts by the heads.

- `strongest_contradiction(earlier, later)`: the pair (an earlier text, a later one) the
  contradiction head scores highest, compared utterance to utterance and sentence to sentence;
- `takeup_miss(customer, reply)`: P(the reply does not take up the customer's message);
- `refusal(customer, reply)`: P(the reply refuses or deflects the request).

A rule reports a finding only at or above its threshold (`judge.semantic.thresholds`), and the
score becomes the finding's confidence. `model_dir` is where the model files are read from
(None: the installed packages; the setting `QALAB_SEMANTIC_MODEL_DIR`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judge.semantic.encoder import get_encoder
from judge.semantic.heads import head_features, load_head
from judge.text import split_sentences

# Texts longer than this are cut before encoding (the encoder reads 256 tokens anyway), so a
# huge reply costs what a long one does.
MAX_TEXT = 2000
# At most this many sentences of a reply and of the earlier texts are compared (the first
# ones): pairs grow as their product.
MAX_SENTENCES = 24


@dataclass(frozen=True)
class ScoredPair:
    score: float
    earlier: str  # verbatim: a whole earlier text or one of its sentences
    later: str  # verbatim: the later text or one of its sentences
    earlier_index: int  # which of the earlier texts `earlier` comes from


def sentences(text: str) -> list[str]:
    """The text's sentences (verbatim, at most MAX_SENTENCES), or the text itself."""
    found = [s.text for s in split_sentences(text[:MAX_TEXT])][:MAX_SENTENCES]
    return found or ([text[:MAX_TEXT]] if text.strip() else [])


def _scores(head: str, pairs: list[tuple[str, str]], model_dir: str | None) -> np.ndarray:
    encoder = get_encoder(Path(model_dir) if model_dir else None)
    firsts = encoder.encode([a for a, _ in pairs])
    seconds = encoder.encode([b for _, b in pairs])
    return load_head(head).probabilities(head_features(pairs, firsts, seconds))


def strongest_contradiction(
    earlier: Sequence[str], later: str, *, model_dir: str | None = None
) -> ScoredPair | None:
    """The earlier text or sentence that `later` (or one of its sentences) contradicts most,
    by the contradiction head; None when there is nothing to compare."""
    later_units = sentences(later)
    if not later_units:
        return None
    origin: dict[str, int] = {}
    for index, text in enumerate(earlier):
        units = sentences(text)
        if len(units) > 1:
            units.append(text[:MAX_TEXT].strip())  # the whole utterance too
        for unit in units:
            origin.setdefault(unit, index)
    earlier_units = list(origin)[-4 * MAX_SENTENCES :]
    if len(later_units) > 1:
        later_units.append(later[:MAX_TEXT].strip())
    pairs = [(a, b) for a in earlier_units for b in later_units if a != b]
    if not pairs:
        return None
    scores = _scores("contradiction", pairs, model_dir)
    best = int(np.argmax(scores))
    first, second = pairs[best]
    return ScoredPair(float(scores[best]), first, second, origin[first])


def utterance_contradiction(
    earlier: Sequence[str], utterance: str, *, model_dir: str | None = None
) -> float:
    """The largest contradiction score of `utterance` against each earlier utterance of the same
    speaker, compared whole (how the head was trained and its threshold picked: DECODE)."""
    pairs = [(e[:MAX_TEXT], utterance[:MAX_TEXT]) for e in earlier if e.strip()]
    if not pairs or not utterance.strip():
        return 0.0
    return float(np.max(_scores("contradiction", pairs, model_dir)))


def takeup_miss(customer: str, reply: str, *, model_dir: str | None = None) -> float:
    """P(the reply does not take up the customer's message)."""
    return float(_scores("takeup", [(customer[:MAX_TEXT], reply[:MAX_TEXT])], model_dir)[0])


def refusal(customer: str, reply: str, *, model_dir: str | None = None) -> float:
    """P(the reply refuses or deflects the customer's request instead of helping)."""
    return float(_scores("refusal", [(customer[:MAX_TEXT], reply[:MAX_TEXT])], model_dir)[0])
