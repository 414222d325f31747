"""The delta knows noise (issue 34, point 4): on the same test set two runs are compared
scenario by scenario, with a paired bootstrap interval of the score change and an exact
McNemar test on pass/fail; on different test sets there is no test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runs.management.commands.qalab_run import EXIT_REGRESSION
from runs.models import Run
from runs.report import report_to_markdown
from runs.report.build import report_build
from runs.report.words import delta_summary
from tests import responders
from tests.runs.helpers import AS_OF, qalab_run

BOT = "python:tests.responders:switchable"


@pytest.fixture
def spoiled():
    yield responders.SPOILED
    responders.SPOILED.clear()


def _run(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["--org", "demo", "--inline", "--seed", "31", "--as-of", AS_OF.isoformat()]
    return qalab_run(*args, "--responder", BOT, *extra, tmp_path=tmp_path)


def test_six_more_failing_scenarios_on_the_same_test_set_is_a_significant_regression(
    demo_org: Any, tmp_path: Path, spoiled: set[str]
) -> None:
    _, first = _run(tmp_path)
    passing = sorted(c["id"] for c in first["cases"] if c["pass"])
    assert len(passing) >= 6, first["cases"]

    # The same bot again on the same test set: nothing flips, no significant change.
    _, same = _run(tmp_path, "--reuse-artifacts", str(first["run_id"]))
    significance = same["delta"]["significance"]
    assert same["delta"]["changed_inputs"]["test_set_identical"]
    assert significance["paired"] and significance["change"] == "no significant change"
    assert significance["p_value"] == 1.0 and significance["to_fail"] == []
    assert significance["scenarios"] == len(first["cases"])

    # --fail-on-regression: no regression, the verdict's own code (0 here).
    code, _ = _run(tmp_path, "--reuse-artifacts", str(first["run_id"]), "--fail-on-regression")
    assert code == 0

    # The bot changed to fail six more scenarios.
    spoiled.update(passing[:6])
    code, worse = _run(tmp_path, "--reuse-artifacts", str(first["run_id"]), "--fail-on-regression")
    assert code == EXIT_REGRESSION == 5  # whatever the verdict (FAIL_CRITICAL here)
    significance = worse["delta"]["significance"]
    assert worse["delta"]["previous_run_id"] > same["run_id"]
    assert significance["to_fail"] == passing[:6] and significance["to_pass"] == []
    # By hand: 6 flips, all to fail: p = 2 x (1/2)^6 = 0.03125 < 0.05.
    assert significance["p_value"] == 0.0312
    assert significance["change"] == "regressed"
    assert significance["mean_score_change"] < 0
    assert significance["interval"][0] <= significance["mean_score_change"]

    # Every format says it.
    run = Run.objects.get(id=worse["run_id"])
    report = report_build(run=run)
    assert "regressed (6 to fail, 0 to pass, McNemar p = 0.031" in delta_summary(report)
    markdown = report_to_markdown(report)
    assert "**Same test set: regressed (6 to fail" in markdown
    assert "Flipped: to fail " + ", ".join(passing[:6]) in markdown


def test_runs_on_different_test_sets_are_not_paired_and_get_no_test(
    demo_org: Any, tmp_path: Path
) -> None:
    _run(tmp_path)
    _, other = qalab_run(
        "--org", "demo", "--inline", "--seed", "32", "--responder", BOT, tmp_path=tmp_path
    )  # fmt: skip
    significance = other["delta"]["significance"]
    assert not other["delta"]["changed_inputs"]["test_set_identical"]
    assert significance["paired"] is False and significance["change"] is None
    assert significance["p_value"] is None and "not paired" in significance["note"]
    report = report_build(run=Run.objects.get(id=other["run_id"]))
    assert "not paired (different test sets): no significance test" in delta_summary(report)
