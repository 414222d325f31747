"""The JSON report has a checked-in JSON Schema, generated from `RunReport`, that real exports
validate against."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.urls import reverse

from runs.models import Run
from runs.report.__main__ import SCHEMA_PATH, schema_text
from runs.report.schema import report_json_schema
from tests.runs.helpers import qalab_run


def _checked_in() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_it_keeps_the_checked_in_schema_equal_to_the_generated_one():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "docs/report.schema.json differs from RunReport (runs/report/schema.py): regenerate it "
        "with `python -m runs.report` and commit it"
    )
    assert _checked_in() == report_json_schema()


def _finished_run(responder: str, tmp_path: Path) -> Run:
    qalab_run(
        "--org", "demo", "--preset", "quick", "--inline", "--seed", "1", "--scenarios", "2",
        "--responder", responder, tmp_path=tmp_path,
    )  # fmt: skip
    return Run.objects.latest("id")


@pytest.fixture
def exported(
    admin_client: Any, demo_org: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """The JSON download of a run with findings, a top action, triage and a delta: the same
    bot twice (a delta compares like with like), first before it began to invent a price."""
    from tests import responders

    bot = "python:tests.responders:markdown_links"
    monkeypatch.setattr(responders, "MARKDOWN_REPLY", "Thanks, noted. What else can I do?")
    _finished_run(bot, tmp_path)
    monkeypatch.undo()
    run = _finished_run(bot, tmp_path)
    finding = run.findings.first()
    admin_client.post(
        reverse("admin:runs_run_triage", args=[run.pk]),
        {"finding": [finding.pk], "state": "confirmed", "note": "seen it"},
    )
    response = admin_client.get(reverse("admin:runs_run_export_json", args=[run.pk]))
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.mark.django_db
def test_it_validates_a_real_runs_json_export_against_the_checked_in_schema(exported):
    assert exported["findings"] and exported["top_actions"] and exported["cases"]
    assert exported["delta"] is not None and exported["delta"]["findings"]["items"]["new"]
    assert any(f["triage"]["reviewer"] for f in exported["findings"])
    jsonschema.Draft202012Validator(_checked_in()).validate(exported)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    *parents, last = path.split(".")

    def change(report: dict[str, Any]) -> None:
        node: Any = report
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return change


_DELETE = object()
BROKEN = {
    "seed as text": _set("seed", "1"),
    "no summary.passed": _set("summary.passed", _DELETE),
    "unknown severity": _set("findings.0.severity", "urgent"),
    "no triage state": _set("findings.0.triage.state", _DELETE),
    "turn index as float": _set("cases.0.turns.0.index", 1.5),
    "pass as text": _set("cases.0.pass", "yes"),
    "delta tokens missing": _set("delta.tokens", _DELETE),
    "an unknown top-level key": _set("verdict_colour", "red"),
}


@pytest.mark.django_db
def test_it_rejects_a_report_with_a_wrong_type_or_a_missing_field(exported):
    validator = jsonschema.Draft202012Validator(_checked_in())
    validator.validate(exported)
    for name, change in BROKEN.items():
        report = copy.deepcopy(exported)
        change(report)
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(report)
        assert not validator.is_valid(report), name
