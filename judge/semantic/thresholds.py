"""The semantic rules and their thresholds: one place, light to import (no model), so settings
can check a run's overrides against it.

Each semantic rule has two thresholds on its head's score (docs/judge-and-scoring.md, "The
semantic layer"):

- `DEFAULT_THRESHOLDS`: the head **alone** reports a finding at or above it. It is used where
  the rules have nothing to anchor on: a dialogue with no knowledge base (open-domain chat,
  transcripts judged from a file without a KB). Self-contradiction: picked on DECODE dev part A
  (the head file's provenance); take-up: `picked_on.alone` in `heads/takeup.json`.
- `CONFIRM_THRESHOLDS`: a finding of the rule's deterministic check is kept only when the head
  scores it at or above this (precision first: the rule proposes, the head confirms).
  Take-up rules: `picked_on.confirm` in `heads/takeup.json` (`python -m judge.semantic.train
  takeup`: out-of-fold scores over the natural development sets, the lowest threshold reaching
  precision 0.85, else the best F0.5); self-contradiction: the same rule
  (`judge.semantic.train.precision_threshold`) over its findings on the natural dev sets (none
  reaches 0.85; best F0.5 at 0.6: 51 findings, precision 0.65).

The kept finding's confidence is the head's score. A run may override the head-alone
thresholds (`QALAB_SEMANTIC_THRESHOLDS=self_contradiction=0.8,...`, snapshotted in its config),
and an organization's runs the confirm ones (`qalab_train_heads --from-triage ORG`: re-fitted on
its reviewers' labels, snapshotted in each run's config as `semantic.confirm_thresholds`).
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_THRESHOLDS: dict[str, float] = {
    "self_contradiction": 0.9,
    "ignored_question": 0.9,
    "irrelevant_reply": 0.9,
}
CONFIRM_THRESHOLDS: dict[str, float] = {
    "self_contradiction": 0.6,
    "ignored_question": 0.1,
    "irrelevant_reply": 0.8,
}
SEMANTIC_RULES: tuple[str, ...] = tuple(DEFAULT_THRESHOLDS)


def threshold(rule: str, overrides: Mapping[str, float] | None = None) -> float:
    """The rule's head-alone threshold: the run's override if it has one, else the default."""
    if overrides and rule in overrides:
        return overrides[rule]
    return DEFAULT_THRESHOLDS[rule]


def confirm_threshold(rule: str, overrides: Mapping[str, float] | None = None) -> float:
    """The rule's confirm threshold: the run's override (an organization's re-fitted one) if it
    has one, else the default."""
    if overrides and rule in overrides:
        return overrides[rule]
    return CONFIRM_THRESHOLDS[rule]
