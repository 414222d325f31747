"""How `python -m judge.semantic.train` picks a threshold from scored findings, and what it
reads of the natural sets (never the unseen one). Pure functions: no scikit-learn needed."""

from __future__ import annotations

from pathlib import Path

from judge.semantic.train import (
    CONFIRM_PRECISION,
    DEFAULT_NATURAL,
    natural_files,
    natural_takeup_turns,
    precision_threshold,
)


def test_the_lowest_threshold_that_reaches_the_precision_with_ten_findings_is_picked():
    # 20 findings scored 0.05 .. 1.0; the correct ones are the 12 highest.
    scores = [step / 20 for step in range(1, 21)]
    correct = [step > 8 for step in range(1, 21)]
    picked = precision_threshold(scores, correct, labels=15)
    # At 0.35 the kept 14 hold 12 correct (0.857 >= 0.85); at 0.30, 15 hold 12 (0.80).
    assert CONFIRM_PRECISION == 0.85
    assert picked["threshold"] == 0.35 and picked["kept"] == 14
    assert picked["precision"] == round(12 / 14, 4) and picked["recall"] == round(12 / 15, 4)
    assert picked["picked_by"].startswith("precision")


def test_without_a_threshold_reaching_the_precision_the_best_f05_is_picked():
    # Every other finding right (the even steps): precision never reaches 0.85. By hand, F0.5
    # = 1.25 p r / (0.25 p + r): keeping all 20, p 0.5, r 1 -> 0.556; from 0.10, 19 kept, 10
    # right, p 0.526, r 1 -> 0.581 (the best); from 1.0, 1 kept, p 1, r 0.1 -> 0.357.
    scores = [step / 20 for step in range(1, 21)]
    correct = [step % 2 == 0 for step in range(1, 21)]
    picked = precision_threshold(scores, correct, labels=10)
    assert picked["picked_by"].startswith("best F0.5")
    assert picked["threshold"] == 0.1 and picked["kept"] == 19 and picked["recall"] == 1.0
    assert picked["f0.5"] == round(1.25 * (10 / 19) / (0.25 * 10 / 19 + 1), 4)


def test_the_take_up_training_reads_the_dev_sets_and_never_the_unseen_one(tmp_path: Path):
    names = [p.relative_to(DEFAULT_NATURAL).as_posix() for p in natural_files(DEFAULT_NATURAL)]
    assert names and not [n for n in names if n.startswith("unseen")]
    assert any(n.startswith("yz_dev/") for n in names)
    sample = tmp_path / "a.jsonl"
    sample.write_text(
        '{"id": "d", "turns": ['
        '{"role": "customer", "text": "what time do you open on sunday?"},'
        '{"role": "bot", "text": "Our loyalty card gives double points."},'
        '{"role": "customer", "text": "ok thanks"},'
        '{"role": "bot", "text": "You are welcome."}],'
        '"labels": [{"rule": "irrelevant_reply", "turn": 1}]}\n',
        "utf-8",
    )
    # Only the reply to a message that asks something is a training turn.
    [(file, dialogue, turn, customer, reply, rules)] = natural_takeup_turns([sample])
    assert (file, dialogue, turn, rules) == (0, "d", 1, {"irrelevant_reply"})
    assert customer.startswith("what time") and reply.startswith("Our loyalty")
