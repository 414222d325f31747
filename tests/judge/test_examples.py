"""The labeled examples (seed 001 layout): every check classifies every one of its examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judge.checks import REGISTRY
from judge.examples import EXAMPLES_DIR, ExampleError, load_examples, run_examples

NEW_CHECKS = ("contradicts_manifest", "self_contradiction", "judge_injection")
MIN_PER_KIND = 5


@pytest.fixture(scope="module")
def report():
    return run_examples()


def test_every_example_is_classified_correctly(report):
    assert report.rows
    assert report.ok, report.table()
    wrong = [row.path for row in report.rows if not row.skipped and not row.ok]
    assert wrong == [], report.table()


@pytest.mark.parametrize("check_id", sorted({*REGISTRY, *NEW_CHECKS}))
def test_every_check_has_enough_positive_and_negative_examples(report, check_id):
    counts = report.counts().get(check_id, {})
    assert counts.get("positive", 0) >= MIN_PER_KIND, counts
    assert counts.get("negative", 0) >= MIN_PER_KIND, counts
    ran = [row for row in report.rows if row.check == check_id]
    assert not [row for row in ran if row.skipped], ran[0].note


def test_the_table_has_a_confusion_row_per_check(report):
    table = report.table()
    for check_id in NEW_CHECKS:
        line = next(line for line in table.splitlines() if line.startswith(check_id))
        assert line.split()[-1] == "ok"
    assert "Misclassified" not in table


def _example(check: str, kind: str, **overrides: object) -> dict:
    data = {
        "id": f"{kind}-001",
        "type": kind,
        "check": check,
        "conversation": [
            {"role": "customer", "content": "how much is a clean?"},
            {"role": "assistant", "content": "A hygiene clean is 80 EUR."},
        ],
        "expectedResult": kind == "positive",
        "rationale": "test",
    }
    data.update(overrides)
    return data


def _write(root: Path, check: str, kind: str, data: object, name: str = "001-x.json") -> Path:
    folder = root / check / kind
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not valid JSON"),
        ([], "must be a JSON object"),
        (_example("questions_per_turn", "negative", expectedResult=True), "expectedResult"),
        (_example("final_status", "negative"), "folder is 'questions_per_turn'"),
        (_example("questions_per_turn", "positive", expectedResult=True), "folder is 'negative'"),
        (
            _example(
                "questions_per_turn",
                "negative",
                conversation=[
                    {"role": "assistant", "content": "Hello!"},
                    {"role": "customer", "content": "hi"},
                ],
            ),
            "customer message",
        ),
        (
            _example(
                "questions_per_turn",
                "negative",
                conversation=[{"role": "customer", "content": "hi"}],
            ),
            "conversation",
        ),
        (_example("questions_per_turn", "negative", extracted=[{}, {}]), "one per assistant turn"),
        (_example("questions_per_turn", "negative", expected="x"), "expected"),
        (_example("questions_per_turn", "negative", rationale=""), "rationale"),
    ],
)
def test_a_malformed_example_is_an_error_naming_its_file(tmp_path, data, message):
    path = _write(tmp_path, "questions_per_turn", "negative", data)
    with pytest.raises(ExampleError) as error:
        run_examples(tmp_path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_misplaced_files_and_duplicate_ids_are_errors(tmp_path):
    _write(tmp_path, "questions_per_turn", "negative", _example("questions_per_turn", "negative"))
    bad_name = _write(
        tmp_path,
        "questions_per_turn",
        "negative",
        _example("questions_per_turn", "negative"),
        name="clean.json",
    )
    with pytest.raises(ExampleError, match="NNN-short-name"):
        load_examples(tmp_path)
    bad_name.unlink()
    _write(
        tmp_path,
        "questions_per_turn",
        "negative",
        _example("questions_per_turn", "negative"),
        name="002-y.json",
    )
    with pytest.raises(ExampleError, match="also used by"):
        load_examples(tmp_path)


def test_a_wrong_label_is_reported_with_its_rationale(tmp_path):
    _write(
        tmp_path,
        "unsupported_facts",
        "positive",
        _example("unsupported_facts", "positive", rationale="80 EUR is in the KB: mislabeled"),
    )
    report = run_examples(tmp_path)
    [row] = report.rows
    assert (row.expected, row.got, row.ok) == (True, False, False)
    assert not report.ok
    table = report.table()
    assert "unsupported_facts/positive/001-x.json: expected a finding, got none" in table
    assert "80 EUR is in the KB: mislabeled" in table


def test_an_unknown_check_is_a_skipped_row_not_a_crash(tmp_path):
    _write(tmp_path, "no_such_check", "negative", _example("no_such_check", "negative"))
    _write(tmp_path, "questions_per_turn", "negative", _example("questions_per_turn", "negative"))
    report = run_examples(tmp_path)
    skipped = [row for row in report.rows if row.skipped]
    assert [row.check for row in skipped] == ["no_such_check"]
    assert "not registered" in skipped[0].note
    assert report.ok  # the rows that ran are right
    assert "no_such_check (1 examples): not registered" in report.table()


def test_examples_run_from_a_copy_of_the_folder(tmp_path):
    shutil.copytree(EXAMPLES_DIR / "judge_injection", tmp_path / "judge_injection")
    report = run_examples(tmp_path)
    assert report.ok
    assert report.confusion()["judge_injection"]["FP"] == 0
