"""Picking a semantic rule's threshold from scored, labelled findings: light (no model, no
scikit-learn, no Django), shared by `judge.semantic.train` (the shipped thresholds) and
`qalab_train_heads --from-triage` (an organization's, on its reviewers' labels)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# The precision a confirm threshold aims for (precision first: the rule proposes, the head
# confirms).
CONFIRM_PRECISION = 0.85


def precision_threshold(
    scores: Sequence[float], correct: Sequence[bool], labels: int
) -> dict[str, Any]:
    """The threshold (0.05 steps) for findings scored `scores`, `correct` ones among them, of
    `labels` labelled defects: the lowest at which at least 10 findings are kept and their
    precision reaches `CONFIRM_PRECISION`; where none does, the one with the best F0.5
    (precision weighted twice recall). With the kept count, precision and recall there."""

    def figures(threshold: float) -> dict[str, Any]:
        kept = [c for s, c in zip(scores, correct, strict=True) if s >= threshold]
        precision = sum(kept) / len(kept) if kept else 0.0
        recall = sum(kept) / labels if labels else 0.0
        f05 = 1.25 * precision * recall / (0.25 * precision + recall) if kept else 0.0
        return {
            "threshold": threshold,
            "kept": len(kept),
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f0.5": round(f05, 4),
        }

    grid = [figures(step / 20) for step in range(1, 20)]
    for row in grid:
        if row["kept"] >= 10 and row["precision"] >= CONFIRM_PRECISION:
            return {**row, "picked_by": f"precision >= {CONFIRM_PRECISION}"}
    best = max(grid, key=lambda row: (row["f0.5"], -row["threshold"]))
    return {**best, "picked_by": "best F0.5 (no threshold reaches the precision)"}


def refit_confirm(
    scores: Sequence[float], right: Sequence[bool], *, floor: float
) -> dict[str, Any]:
    """A confirm threshold re-fitted on findings the head confirmed (each scored at or above
    `floor`, the threshold they were judged with) and labelled right or wrong by reviewers:
    `precision_threshold`'s pick (recall over the findings labelled right), never below
    `floor` (nobody saw, so nobody labelled, a finding the head scored lower). With the kept
    count, precision and recall at the threshold, and the floor."""
    picked = precision_threshold(scores, right, labels=sum(right))
    if picked["threshold"] >= floor:
        return {**picked, "floor": floor}
    kept = [c for s, c in zip(scores, right, strict=True) if s >= floor]
    precision = sum(kept) / len(kept) if kept else 0.0
    recall = sum(kept) / sum(right) if any(right) else 0.0
    f05 = 1.25 * precision * recall / (0.25 * precision + recall) if precision + recall else 0.0
    return {
        **picked,
        "threshold": floor,
        "kept": len(kept),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f0.5": round(f05, 4),
        "picked_by": f"{picked['picked_by']}, raised to the threshold the findings were judged with",
        "floor": floor,
    }
