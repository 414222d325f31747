"""`qalab_judge --dialogues`: a dialogue's skipped checks are the checks that did not run on it
(issue 35, point 6): never one that found something there, and every one the judging deadline
left; the summary says which dialogues skipped a check that others ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.test import override_settings

from judge.checks import REGISTRY
from tests.runs.test_judge_command import LOOP, PRICE, _write


def _judge(tmp_path: Path, *dialogues: dict[str, Any]) -> list[dict[str, Any]]:
    out = tmp_path / "out.json"
    path = _write(tmp_path / "d.jsonl", *dialogues)
    call_command("qalab_judge", "--dialogues", str(path), "--json", str(out))
    return json.loads(out.read_text())["dialogues"]


def test_a_check_that_found_something_is_not_skipped_in_the_summary(db, tmp_path, capsys) -> None:
    loop, price = _judge(tmp_path, LOOP, PRICE)
    for dialogue in (loop, price):
        ran = {f["detector"].removeprefix("deterministic:") for f in dialogue["findings"]}
        assert not ran & set(dialogue["skipped_checks"]), dialogue["id"]
    assert "unsupported_facts" in loop["skipped_checks"]
    assert [f["rule"] for f in price["findings"]] == ["unsupported_facts"]
    summary = capsys.readouterr().out.splitlines()[-1]
    # Only the loop (no KB) skipped it; the price dialogue ran it and it found an invented price.
    assert "unsupported_facts on 1 of 2 (loop)" in summary, summary
    everywhere = summary.split("; skipped checks: ")[1].split(" on every dialogue")[0]
    assert "final_status" in everywhere and "unsupported_facts" not in everywhere, summary


def test_the_checks_a_deadline_left_are_listed_as_skipped(db, tmp_path) -> None:
    with override_settings(QALAB_JUDGE_DEADLINE_S=1e-9, QALAB_SEMANTIC="off"):
        [price] = _judge(tmp_path, PRICE)
    # Out of time before the first check: nothing ran, so every check is listed, none found.
    assert price["findings"] == []
    assert price["skipped_checks"] == list(REGISTRY)
