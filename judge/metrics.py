"""Evaluation metrics for the lexical scorers (`judge.support`, `judge.contradiction`) on
labelled data: AUROC and the confusion counts with the figures derived from them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve of `scores` for the positive `labels`, by the rank-sum
    (Mann-Whitney) statistic; tied scores share their mean rank (count half). Needs both
    classes."""
    if len(scores) != len(labels):
        raise ValueError("scores and labels differ in length")
    positives = sum(1 for label in labels if label)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        raise ValueError("AUROC needs at least one positive and one negative")
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    rank_sum = 0.0
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        rank_sum += mean_rank * sum(1 for k in order[i : j + 1] if labels[k])
        i = j + 1
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


@dataclass(frozen=True)
class Confusion:
    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def specificity(self) -> float:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def balanced_accuracy(self) -> float:
        return (self.recall + self.specificity) / 2


def confusion(predicted: Sequence[bool], labels: Sequence[bool]) -> Confusion:
    """Counts of predicted vs true positives."""
    pairs = list(zip(predicted, labels, strict=True))
    return Confusion(
        tp=sum(1 for p, t in pairs if p and t),
        fp=sum(1 for p, t in pairs if p and not t),
        tn=sum(1 for p, t in pairs if not p and not t),
        fn=sum(1 for p, t in pairs if not p and t),
    )
