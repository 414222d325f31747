"""The semantic rules and their thresholds: one place, light to import (no model), so settings
can check a run's overrides against it.

Each semantic rule has two thresholds on its head's score (README: Judge, semantic layer):

- `DEFAULT_THRESHOLDS`: the head **alone** reports a finding at or above it. It is used where
  the rules have nothing to anchor on: a dialogue with no knowledge base (open-domain chat,
  transcripts judged from a file without a KB). Self-contradiction: picked on DECODE dev part A
  (the head file's provenance); take-up: picked on the natural dev sets for precision.
- `CONFIRM_THRESHOLDS`: a finding of the rule's deterministic check is kept only when the head
  scores it at or above this (precision first: the rule proposes, the head confirms); picked
  on the natural dev sets (tests/data/natural/*_dev*.jsonl).

The kept finding's confidence is the head's score. A run may override the head-alone
thresholds (`QALAB_SEMANTIC_THRESHOLDS=self_contradiction=0.8,...`, snapshotted in its config).
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_THRESHOLDS: dict[str, float] = {
    "self_contradiction": 0.9,
    "ignored_question": 0.8,
    "irrelevant_reply": 0.9,
}
CONFIRM_THRESHOLDS: dict[str, float] = {
    "self_contradiction": 0.5,
    "ignored_question": 0.2,
    "irrelevant_reply": 0.5,
}
SEMANTIC_RULES: tuple[str, ...] = tuple(DEFAULT_THRESHOLDS)


def threshold(rule: str, overrides: Mapping[str, float] | None = None) -> float:
    """The rule's head-alone threshold: the run's override if it has one, else the default."""
    if overrides and rule in overrides:
        return overrides[rule]
    return DEFAULT_THRESHOLDS[rule]
