"""A bot that fails the task fails the run (issue 32, point 5): a Quick run against a bot that
refuses every request ends FAIL_CRITICAL with exit code 1, while the reference bot on the demo
org gets no `refused_request` finding."""

from __future__ import annotations

from pathlib import Path

from django.test import override_settings

from qalab.models import Organization
from runs.models import RunStatus
from tests.responder_server import REFUSALS, ResponderServer, refuse_everything
from tests.runs.helpers import qalab_run

FAST = {"QALAB_RESPONDER_READ_TIMEOUT": 2, "QALAB_RESPONDER_CONNECT_TIMEOUT": 2}


def _refused(report: dict) -> list[dict]:
    return [
        f
        for f in report["findings"]
        if f["rule_id"] == "refused_request" or "refused_request" in f["corroborating"]
    ]


def test_a_bot_refusing_every_request_fails_a_quick_run(
    demo_org: Organization, tmp_path: Path
) -> None:
    with ResponderServer(reply=refuse_everything) as bot, override_settings(**FAST):
        code, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "3",
            "--responder",
            bot.url,
            tmp_path=tmp_path,
        )
    assert report["status"] == RunStatus.DONE, report["error"]
    assert report["verdict"] == "FAIL_CRITICAL" and code == 1
    refused = _refused(report)
    # Most scenarios ask for a price, the hours, a policy or a booking the KB covers; the
    # out-of-scope ones (medical advice, a service the practice does not offer) are no finding.
    assert len({f["case"] for f in refused}) >= len(report["cases"]) // 2
    for f in refused:
        assert f["severity"] == "critical" and f["fix"]["target"] == "prompt"
        sources = {e["source"] for e in f["evidence"]}
        assert {"customer", "reply"} <= sources and sources & {"fixture", "manifest"}
        assert any(f["subject"] in refusal for refusal in REFUSALS)
    scenarios = {c["id"]: c["scenario"] for c in report["cases"]}
    flagged = {scenarios[f["case"]] for f in refused}
    assert {"price_question", "hours_question"} <= flagged
    assert not flagged & {"safety_sensitive", "out_of_kb_question"}
    # The Top 5 leads with it.
    first = report["top_actions"][0]
    by_id = {f["id"]: f for f in report["findings"]}
    assert {by_id[i]["rule_id"] for i in first["finding_ids"]} == {"refused_request"}


def test_the_reference_bot_is_never_taken_for_a_refusing_one(
    demo_org: Organization, tmp_path: Path
) -> None:
    """Seeds 14, 22 and 113 gave the clean reference bot a false critical or major (a KB policy
    restated read as a refusal; a prose price list read as another choice): at none of these
    seeds does it get a critical or a major finding."""
    for seed in ("1", "7", "14", "22", "113"):
        code, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            seed,
            tmp_path=tmp_path,
        )
        assert report["status"] == RunStatus.DONE, report["error"]
        assert _refused(report) == [], seed
        serious = [
            (f["rule_id"], f["subject"])
            for f in report["findings"]
            if f["severity"] in ("critical", "major")
        ]
        assert serious == [], seed
        assert code == 0
