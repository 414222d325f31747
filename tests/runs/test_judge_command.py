"""`qalab_judge --dialogues FILE.jsonl`: judge transcripts from a file, with or without an org;
and `qalab_calibrate --natural DIR` on human-labelled transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

LOOP = {
    "id": "loop",
    "turns": [
        {"role": "bot", "text": "Hi! How can I help?"},
        {"role": "customer", "text": "hi, need to come in for something"},
        {"role": "bot", "text": "Which service would you like, and could you tell me your name?"},
        {"role": "customer", "text": "dunno yet, what would u suggest"},
        {"role": "bot", "text": "Which service would you like, and your phone number?"},
        {"role": "customer", "text": "no idea"},
        {"role": "bot", "text": "Which service would you like?"},
    ],
    "labels": [{"rule": "repeated_question", "turn": 4}],
}
PRICE = {
    "id": "price",
    "kb": [{"id": "prices", "title": "Prices", "text": "Hygiene clean - 80 EUR - 45 min"}],
    "turns": [
        {"role": "customer", "text": "how much is a clean?"},
        {"role": "bot", "text": "A hygiene clean is 95 EUR."},
    ],
}


def _write(path: Path, *dialogues: dict) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in dialogues), "utf-8")
    return path


def test_it_judges_a_file_without_an_org_and_lists_what_it_skipped(db, tmp_path, capsys):
    out = tmp_path / "out.json"
    call_command(
        "qalab_judge",
        "--dialogues",
        str(_write(tmp_path / "d.jsonl", LOOP, PRICE)),
        "--json",
        str(out),
    )
    result = json.loads(out.read_text())
    loop, price = result["dialogues"]
    rules = {(f["rule"], f["turn"]) for f in loop["findings"]}
    # The bot messages are turns 2, 4 and 6 of the file: findings point at those indexes.
    assert ("ignored_question", 4) in rules
    [repeat] = [f for f in loop["findings"] if f["rule"] == "repeated_question"]
    assert repeat["severity"] == "major" and repeat["turn"] == 6  # asked the third time
    assert [e["turn"] for e in repeat["evidence"]] == [2, 4, 6]
    assert {"unsupported_facts", "contradicts_manifest", "final_status"} <= set(
        loop["skipped_checks"]
    )
    assert "unsupported_facts" not in price["skipped_checks"]  # it brings a KB
    [invented] = price["findings"]
    assert invented["rule"] == "unsupported_facts" and invented["turn"] == 1
    assert invented["evidence"][0] == {
        "source": "reply",
        "quote": "A hygiene clean is 95 EUR.",
        "turn": 1,
    }
    assert "skipped checks:" in capsys.readouterr().out


def test_with_an_org_its_ground_truth_and_kb_are_used(demo_org, tmp_path):
    wrong = {
        "id": "wrong",
        "turns": [
            {"role": "customer", "text": "how much is a hygiene clean?"},
            {"role": "bot", "text": "A hygiene clean is 95 EUR."},
        ],
    }
    out = tmp_path / "out.json"
    call_command(
        "qalab_judge",
        "--dialogues",
        str(_write(tmp_path / "d.jsonl", wrong)),
        "--org",
        "demo",
        "--json",
        str(out),
    )
    [dialogue] = json.loads(out.read_text())["dialogues"]
    assert dialogue["skipped_checks"] == ["extraction_accuracy", "final_status"]
    reported = {r for f in dialogue["findings"] for r in [f["rule"], *f["corroborating"]]}
    assert "contradicts_manifest" in reported


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "d.jsonl:1: line"),
        ('{"id": "x", "turns": []}', "d.jsonl:1: turns"),
        ('{"id": "x", "turns": [{"role": "agent", "text": "hi"}]}', "d.jsonl:1: turns.0.role"),
        ('{"turns": [{"role": "bot", "text": "hi"}]}', "d.jsonl:1: id"),
    ],
)
def test_a_bad_line_is_named(db, tmp_path, line, message):
    path = tmp_path / "d.jsonl"
    path.write_text(line + "\n", "utf-8")
    with pytest.raises(CommandError, match=message):
        call_command("qalab_judge", "--dialogues", str(path))


def test_missing_file_duplicate_ids_and_unknown_org_are_clear_errors(db, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("qalab_judge", "--dialogues", str(tmp_path / "none.jsonl"))
    with pytest.raises(CommandError, match="duplicate id 'loop'"):
        call_command("qalab_judge", "--dialogues", str(_write(tmp_path / "d.jsonl", LOOP, LOOP)))
    with pytest.raises(CommandError, match="no organization with slug 'nope'"):
        call_command(
            "qalab_judge", "--dialogues", str(_write(tmp_path / "e.jsonl", LOOP)), "--org", "nope"
        )


def test_calibrate_natural_scores_labels_per_rule(db, tmp_path, capsys):
    folder = tmp_path / "natural"
    folder.mkdir()
    _write(
        folder / "one.jsonl", LOOP, {**PRICE, "labels": [{"rule": "unsupported_facts", "turn": 1}]}
    )
    out = tmp_path / "figures.json"
    call_command("qalab_calibrate", "--natural", str(folder), "--json", str(out))
    figures = json.loads(out.read_text())["natural"]["all"]
    assert figures["repeated_question"]["labels"] == 1
    assert figures["repeated_question"]["recall"] == 1.0
    assert figures["unsupported_facts"]["precision"] == 1.0
    # ignored_question fired on the loop, where nobody labelled it: a false alarm.
    assert figures["ignored_question"]["precision"] == 0.0
    assert figures["ignored_question"]["false_alarms"] == ["loop@4"]
    assert "== one.jsonl" in capsys.readouterr().out


REFUSER = {
    "id": "refuser",
    "kb": [{"id": "prices", "title": "Prices", "text": "Hygiene clean - 80 EUR - 45 min"}],
    "turns": [
        {"role": "customer", "text": "how much is a hygiene clean?"},
        {"role": "bot", "text": "Sorry, I can't help with prices. Please call the practice."},
    ],
    "labels": [{"rule": "refused_request", "turn": 1}],
}


def test_calibrate_natural_scores_refused_request_only_where_a_file_labels_it(db, tmp_path):
    folder = tmp_path / "natural"
    folder.mkdir()
    _write(folder / "a_refusals.jsonl", REFUSER)
    _write(folder / "b_older.jsonl", LOOP)
    out = tmp_path / "figures.json"
    call_command("qalab_calibrate", "--natural", str(folder), "--json", str(out))
    figures = json.loads(out.read_text())["natural"]
    assert figures["a_refusals.jsonl"]["refused_request"]["labels"] == 1
    assert "refused_request" not in figures["b_older.jsonl"]
    assert "ignored_question" in figures["b_older.jsonl"]  # every file: each EVALUATED rule
    assert figures["all"]["refused_request"]["labels"] == 1
    assert figures["all"]["refused_request"]["found"] == 1
    assert figures["all"]["refused_request"]["precision"] == 1.0


def test_calibrate_natural_rejects_a_label_on_a_customer_turn(db, tmp_path):
    folder = tmp_path / "natural"
    folder.mkdir()
    _write(folder / "bad.jsonl", {**PRICE, "labels": [{"rule": "unsupported_facts", "turn": 0}]})
    with pytest.raises(CommandError, match=r"bad\.jsonl:1: label turn 0 is not a bot message"):
        call_command("qalab_calibrate", "--natural", str(folder))
    with pytest.raises(CommandError, match="no labelled"):
        call_command("qalab_calibrate", "--natural", str(tmp_path / "empty"))


PARKING = {
    "id": "parking",
    "kb": [
        {
            "id": "k",
            "title": "Visiting",
            "text": "Hygiene clean - 80 EUR - 45 min. There is no parking at the practice.",
        }
    ],
    "turns": [
        {"role": "customer", "text": "how much is a clean, and can I park?"},
        {
            "role": "bot",
            "text": "A hygiene clean is 80 EUR. We also have free underground parking for all "
            "patients, with a valet on duty.",
        },
        {"role": "customer", "text": "and whitening?"},
        {"role": "bot", "text": "Whitening is 95 EUR."},
    ],
}


def test_calibrate_claims_scores_the_unsupported_sentence_rules(db, tmp_path, capsys):
    folder = tmp_path / "claims"
    folder.mkdir()
    marked = "We also have free underground parking for all patients, with a valet on duty."
    _write(
        folder / "one.jsonl",
        {**PARKING, "claims": [{"turn": 1, "quote": marked}, {"turn": 3, "quote": "95 EUR"}]},
    )
    out = tmp_path / "figures.json"
    call_command("qalab_calibrate", "--claims", str(folder), "--json", str(out))
    figures = json.loads(out.read_text())["claims"]["all"]
    # The invented price is found by unsupported_facts, the invented parking by the sentence
    # check; neither reports the grounded first sentence.
    assert figures["unsupported_facts"] == {
        **figures["unsupported_facts"],
        "labels": 2,
        "found": 1,
        "findings": 1,
        "precision": 1.0,
    }
    assert figures["ungrounded_sentence"]["found"] == 1
    assert figures["ungrounded_sentence"]["precision"] == 1.0
    assert figures["either"]["recall"] == 1.0
    assert "== one.jsonl" in capsys.readouterr().out


def test_calibrate_claims_rejects_a_quote_not_in_the_message(db, tmp_path):
    folder = tmp_path / "claims"
    folder.mkdir()
    _write(folder / "bad.jsonl", {**PARKING, "claims": [{"turn": 1, "quote": "valet parking"}]})
    with pytest.raises(CommandError, match=r"bad\.jsonl:1: claim quote not in bot message 1"):
        call_command("qalab_calibrate", "--claims", str(folder))
    _write(folder / "bad.jsonl", {**PARKING, "claims": [{"turn": 0, "quote": "clean"}]})
    with pytest.raises(CommandError, match=r"claim turn 0 is not a bot message"):
        call_command("qalab_calibrate", "--claims", str(folder))
