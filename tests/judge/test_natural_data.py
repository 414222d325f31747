"""The labelled data the checks are measured on is well formed: every label on a bot message,
every claim quote verbatim in its message, ids unique, each rule labelled in every set."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.natural import EVALUATED, read_claimed, read_labelled

DATA = Path(__file__).resolve().parents[1] / "data"
NATURAL = sorted((DATA / "natural").glob("*.jsonl"))
CLAIMS = sorted((DATA / "claims").glob("*.jsonl"))


@pytest.mark.parametrize("path", NATURAL, ids=lambda p: p.name)
def test_each_natural_set_reads_and_labels_every_rule(path: Path) -> None:
    dialogues = read_labelled(path)
    assert len({d.id for d in dialogues}) == len(dialogues) > 0
    labelled = {label.rule for d in dialogues for label in d.labels}
    assert labelled <= set(EVALUATED)
    assert labelled == set(EVALUATED), f"{path.name} lacks {set(EVALUATED) - labelled}"


def test_held_out_and_dev_sets_are_both_there() -> None:
    names = [p.name for p in NATURAL]
    assert any("_heldout" in n for n in names) and any("_dev" in n for n in names)


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.name)
def test_claim_sets_quote_their_messages(path: Path) -> None:
    dialogues = read_claimed(path)
    assert dialogues and sum(len(d.claims) for d in dialogues) > 0
