"""The contradiction scorer on DECODE-format records: reading a record, and the figures
of the scorer on a labelled set (`manage.py qalab_calibrate --task self_contradiction`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from judge.contradiction.scorer import DECISION_THRESHOLD, assess
from judge.metrics import auroc, confusion

_R = TypeVar("_R")

LABELS = {"contradiction": True, "no_contradiction": False}


@dataclass(frozen=True)
class DecodeRecord:
    """One DECODE-format record as the scorer sees it."""

    earlier: list[str]  # the speaker's earlier turns
    contexts: list[str]  # the other speaker's turn before each ("" if none)
    utterance: str
    prompt: str  # the other speaker's turn just before the utterance ("" if none)
    contradiction: bool


def decode_record(item: object) -> DecodeRecord:
    """A DECODE record (`turns` [{agent_id, text}], `last_utterance` {agent_id, text}, `label`
    contradiction / no_contradiction or boolean `is_contradiction`); ValueError saying what is
    wrong."""
    if not isinstance(item, Mapping):
        raise ValueError("expected a JSON object")
    missing = [k for k in ("turns", "last_utterance") if k not in item]
    if "label" not in item and "is_contradiction" not in item:
        missing.append("label")
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    turns, last = item["turns"], item["last_utterance"]
    if not isinstance(turns, list) or not all(_is_turn(t) for t in turns):
        raise ValueError("turns must be a list of {agent_id, text} objects")
    if not _is_turn(last):
        raise ValueError("last_utterance must be an {agent_id, text} object")
    if "label" in item:
        if item["label"] not in LABELS:
            raise ValueError(
                f"unknown label {item['label']!r} (expected contradiction or no_contradiction)"
            )
        label = LABELS[item["label"]]
    elif isinstance(item["is_contradiction"], bool):
        label = item["is_contradiction"]
    else:
        raise ValueError("is_contradiction must be true or false")
    speaker = last["agent_id"]
    earlier: list[str] = []
    contexts: list[str] = []
    for index, turn in enumerate(turns):
        if turn["agent_id"] == speaker:
            earlier.append(turn["text"])
            before = turns[index - 1] if index else None
            contexts.append(before["text"] if before and before["agent_id"] != speaker else "")
    prompt = turns[-1]["text"] if turns and turns[-1]["agent_id"] != speaker else ""
    return DecodeRecord(earlier, contexts, last["text"], prompt, label)


def dev_part(records: Sequence[_R], part: str | None) -> list[_R]:
    """DECODE dev part A (records at even positions: the semantic heads' thresholds are picked
    on it) or B (odd positions: reported, never picked on); every record without a part."""
    if part is None:
        return list(records)
    return list(records[{"A": 0, "B": 1}[part] :: 2])


def _is_turn(turn: object) -> bool:
    return isinstance(turn, Mapping) and "agent_id" in turn and isinstance(turn.get("text"), str)


def score_record(record: DecodeRecord) -> float:
    """The contradiction score of one record's last utterance."""
    return assess(
        record.earlier, record.utterance, contexts=record.contexts, prompt=record.prompt
    ).score


def evaluate(
    records: Iterable[DecodeRecord | Mapping[str, Any]],
    threshold: float = DECISION_THRESHOLD,
    score: Callable[[DecodeRecord], float] = score_record,
) -> dict[str, Any]:
    """Figures of the scorer on DECODE-format records, contradiction = positive class: n,
    contradictions, threshold, balanced_accuracy, precision, recall, f1 (at `threshold`), auroc
    (None unless both labels occur) and the confusion counts."""
    parsed = [r if isinstance(r, DecodeRecord) else decode_record(r) for r in records]
    scores = [score(r) for r in parsed]
    labels = [r.contradiction for r in parsed]
    counts = confusion([s >= threshold for s in scores], labels)
    positives = sum(labels)
    both = 0 < positives < len(labels)
    return {
        "n": len(parsed),
        "contradictions": positives,
        "threshold": threshold,
        "balanced_accuracy": round(counts.balanced_accuracy, 4),
        "precision": round(counts.precision, 4),
        "recall": round(counts.recall, 4),
        "f1": round(counts.f1, 4),
        "auroc": round(auroc(scores, labels), 4) if both else None,
        "confusion": {"tp": counts.tp, "fp": counts.fp, "tn": counts.tn, "fn": counts.fn},
    }
