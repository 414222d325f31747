"""A Quick run's reports at a fixed seed stay what they were: refactors must not change them.

The golden files were written by the code before the services/report refactor. When a change
is *meant* to alter a report, regenerate them with `QALAB_UPDATE_GOLDEN=1 make test` and say why
in the commit.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import time_machine

from tests.runs.helpers import AS_OF as PINNED_DAY
from tests.runs.helpers import qalab_run

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
RESPONDER = "canary:invent_price+contradict_self+too_many_questions"
_VOLATILE = {"run_id", "started_at", "finished_at", "latency_ms", "created_at", "updated_at"}


def normalize_report(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs between two identical runs: ids, times, latencies."""
    ids = {f["id"]: i for i, f in enumerate(report.get("findings", []))}
    run_id = report["run_id"]

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items() if k not in _VOLATILE}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if key in {"id", "finding_ids"} and isinstance(value, int) and value in ids:
            return f"finding#{ids[value]}"
        if isinstance(value, str):
            return value.replace(f"qalab-{run_id}-", "qalab-RUN-")
        return value

    return walk(report)


def normalize_markdown(text: str, run_id: int) -> str:
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(\+00:00|Z)?", "<time>", text)
    text = re.sub(r"\b\d+ ms\b", "<ms>", text)
    text = re.sub(rf"\b([Rr]un) #?{run_id}\b", r"\1 <id>", text)
    return text.replace(f"qalab-{run_id}-", "qalab-RUN-")


def _compare(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("QALAB_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} changed; regenerate with QALAB_UPDATE_GOLDEN=1 if meant"


# The golden run's reference date: its scenarios' dates ("Monday the 14th") count from it.
AS_OF = PINNED_DAY.isoformat()


def _golden_run(tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    code, report = qalab_run(
        "--org", "demo", "--preset", "quick", "--inline", "--seed", "1", "--as-of", AS_OF,
        "--responder", RESPONDER, "--md", str(tmp_path / "report.md"),
        tmp_path=tmp_path,
    )  # fmt: skip
    return code, report, (tmp_path / "report.md").read_text(encoding="utf-8")


def _report_text(report: dict[str, Any]) -> str:
    return json.dumps(normalize_report(report), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize(
    ("semantic", "name"), [("off", "quick_seed1_report"), ("on", "quick_seed1_semantic_report")]
)
def test_a_quick_runs_reports_at_a_fixed_seed_match_the_golden_files(
    demo_org, tmp_path, settings, semantic, name
):
    """The deterministic judge alone (QALAB_SEMANTIC=off) and with the semantic layer."""
    settings.QALAB_SEMANTIC = semantic
    code, report, markdown = _golden_run(tmp_path)

    assert code == 1 and report["verdict"] == "FAIL_CRITICAL"
    assert report["findings"], "the golden run must have findings to compare"
    assert report["as_of"] == AS_OF
    assert ("semantic" in report["judge_layers"]) == (semantic == "on")
    _compare(f"{name}.json", _report_text(report))
    _compare(f"{name}.md", normalize_markdown(markdown, report["run_id"]))


@pytest.mark.parametrize("today", ["2026-01-05T09:00:00Z", "2031-07-19T23:30:00Z"])
def test_the_same_as_of_date_gives_the_golden_reports_whatever_day_it_is(
    demo_org, tmp_path, today, settings
):
    """DESIGN §8: same org context, preset, seed and as-of date => identical artifacts, on any
    calendar day (here the clock is moved far before and after the golden run's date)."""
    settings.QALAB_SEMANTIC = "off"
    with time_machine.travel(today, tick=True):
        code, report, markdown = _golden_run(tmp_path)
        assert date.today().isoformat() == today[:10]  # the clock really moved

    assert code == 1
    assert report["as_of"] == AS_OF
    assert _report_text(report) == (GOLDEN / "quick_seed1_report.json").read_text("utf-8")
    assert normalize_markdown(markdown, report["run_id"]) == (
        GOLDEN / "quick_seed1_report.md"
    ).read_text("utf-8")


def test_normalizing_keeps_what_a_refactor_could_break():
    report = {
        "run_id": 9,
        "started_at": "t",
        "findings": [{"id": 41, "rule": "a"}, {"id": 40, "rule": "b"}],
        "top_actions": [{"finding_ids": [40, 41], "title": "x"}],
        "cases": [{"session_id": "qalab-9-sc-01", "turns": [{"latency_ms": 3, "reply": "r"}]}],
    }
    assert normalize_report(report) == {
        "findings": [{"id": "finding#0", "rule": "a"}, {"id": "finding#1", "rule": "b"}],
        "top_actions": [{"finding_ids": ["finding#1", "finding#0"], "title": "x"}],
        "cases": [{"session_id": "qalab-RUN-sc-01", "turns": [{"reply": "r"}]}],
    }
    changed = dict(report, findings=[{"id": 41, "rule": "c"}, {"id": 40, "rule": "b"}])
    assert normalize_report(changed) != normalize_report(report)


def test_normalizing_markdown_removes_the_run_id_and_times_only():
    text = "# AI QA Lab report: run 17\nRun 17 took 3 ms at 2026-01-02T03:04:05+00:00; run 170 too"
    assert normalize_markdown(text, 17) == (
        "# AI QA Lab report: run <id>\nRun <id> took <ms> at <time>; run 170 too"
    )
