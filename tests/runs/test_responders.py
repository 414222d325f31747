"""The responder contract end to end: HTTP and python responders, faults, canaries, isolation."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import override_settings

from runs.models import RunArtifact, RunCase, RunStatus
from runs.simulator import canary
from tests import responders
from tests.conftest import run_celery_worker
from tests.factories import import_demo_org
from tests.responder_server import ResponderServer
from tests.runs.helpers import qalab_run

FAST = {"QALAB_RESPONDER_READ_TIMEOUT": 1, "QALAB_RESPONDER_CONNECT_TIMEOUT": 1}


def _fixture_kb(run_id: int, fixture_key: str) -> list[dict]:
    from generator.schemas import Fixture

    content = RunArtifact.objects.get(run_id=run_id, kind="fixture", key=fixture_key).content
    return [
        {"id": d.id, "title": d.title, "text": d.text}
        for d in Fixture.model_validate_json(content).documents
    ]


def _assert_contract_requests(report: dict, requests: list[dict]) -> None:
    from generator.schemas import Manifest

    run_id = report["run_id"]
    manifest = Manifest.model_validate_json(
        RunArtifact.objects.get(run_id=run_id, kind="manifest").content
    )
    intake = [
        {"key": f.key, "label": f.label, "required": f.required} for f in manifest.intake_fields
    ]
    fixtures = {c.scenario_key: c.fixture_key for c in RunCase.objects.filter(run_id=run_id)}
    # The preflight greeting comes first, in a session of its own (test_preflight.py).
    assert requests[0]["session_id"] == f"qalab-{run_id}-preflight"
    requests = requests[1:]
    assert requests
    for body in requests:
        match = re.fullmatch(rf"qalab-{run_id}-(sc-\d+)", body["session_id"])
        assert match, body["session_id"]
        assert body["kb"] == _fixture_kb(run_id, fixtures[match.group(1)])
        assert body["intake_fields"] == intake
        assert body["organization"] == "demo"
        assert body["messages"][-1]["role"] == "customer"


def test_it_stores_exactly_what_an_http_responder_returned(demo_org, tmp_path):
    with ResponderServer() as bot, override_settings(**FAST):
        code, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "3", "--responder", bot.url, tmp_path=tmp_path
        )
    assert report["status"] == RunStatus.DONE, report["error"]
    assert code in (0, 1)
    assert report["responder"] == bot.url
    _assert_contract_requests(report, bot.requests)
    assert len(report["cases"]) == 12
    for case in report["cases"]:
        sent = bot.replies[f"qalab-{report['run_id']}-{case['id']}"]
        assert [t["reply"] for t in case["turns"]] == [r["reply"] for r in sent]
        assert [t["extracted"] for t in case["turns"]] == [r["extracted"] for r in sent]
        assert [t["status"] for t in case["turns"]] == [r["status"] for r in sent]


def test_it_stores_exactly_what_a_python_responder_returned(demo_org, tmp_path):
    responders.RECORDED.clear()
    _, report = qalab_run(
        "--org",
        "demo",
        "--inline",
        "--seed",
        "4",
        "--responder",
        "python:tests.responders:recording",
        tmp_path=tmp_path,
    )
    assert report["status"] == RunStatus.DONE, report["error"]
    _assert_contract_requests(report, [body for body, _ in responders.RECORDED])
    stored = [(t["reply"], t["extracted"]) for c in report["cases"] for t in c["turns"]]
    returned = [(reply["reply"], reply["extracted"]) for _, reply in responders.RECORDED[1:]]
    assert sorted(stored, key=str) == sorted(returned, key=str)


def test_it_marks_only_the_failing_cases_and_never_passes(demo_org, tmp_path):
    faults = {"sc-03": "timeout", "sc-07": "garbage"}
    with ResponderServer(faults=faults, sleep=2.5) as bot, override_settings(**FAST):
        code, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "5", "--responder", bot.url, tmp_path=tmp_path
        )
    cases = {c["id"]: c for c in report["cases"]}
    assert cases["sc-03"]["status"] == "error" and "timed out" in cases["sc-03"]["error"]
    assert cases["sc-07"]["status"] == "error" and "did not reply JSON" in cases["sc-07"]["error"]
    assert [k for k, c in cases.items() if c["status"] == "done"] == [
        k for k in sorted(cases) if k not in faults
    ]
    # Scored on the ten that completed, but never a pass while cases errored.
    assert report["summary"]["completed"] == 10
    assert report["verdict"] == "FAIL_CRITICAL" and code == 1
    assert "2 case(s) errored" in report["verdict_reason"]
    errors = [f for f in report["findings"] if f["rule_id"] == "case_error"]
    assert sorted(f["case"] for f in errors) == ["sc-03", "sc-07"]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("500", "HTTP 500"),
        ("wrong_shape", "outside the contract"),
        ("huge", "more than 1,000,000 bytes"),
        ("garbage", "did not reply JSON"),
    ],
)
def test_it_gives_the_reason_of_a_broken_reply(demo_org, tmp_path, fault, reason):
    with ResponderServer(faults={"sc-01": fault}) as bot, override_settings(**FAST):
        _, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "6",
            "--scenarios",
            "2",
            "--responder",
            bot.url,
            tmp_path=tmp_path,
        )
    first, second = report["cases"]
    assert first["status"] == "error" and reason in first["error"]
    assert second["status"] == "done"


class _FailAfterFirstTurn(dict):
    """Faults that break case sc-01 from its second request on."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def get(self, key: str, default: str = "") -> str:
        if key != "sc-01":
            return default
        self.seen += 1
        return "500" if self.seen > 1 else default


def test_it_keeps_the_turns_written_before_a_failure(demo_org, tmp_path):
    with ResponderServer(faults=_FailAfterFirstTurn()) as bot, override_settings(**FAST):
        _, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "7",
            "--scenarios",
            "1",
            "--responder",
            bot.url,
            tmp_path=tmp_path,
        )
    [case] = report["cases"]
    assert case["status"] == "error" and "HTTP 500" in case["error"]
    assert len(case["turns"]) == 1


def test_it_sends_the_auth_header_from_the_environment_only(demo_org, tmp_path, monkeypatch):
    monkeypatch.setenv("QA_TEST_BOT_TOKEN", "Bearer s3cret-value")
    with (
        ResponderServer() as bot,
        override_settings(**FAST, QALAB_RESPONDER_AUTH_ENV="QA_TEST_BOT_TOKEN"),
    ):
        _, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "8",
            "--scenarios",
            "1",
            "--responder",
            bot.url,
            tmp_path=tmp_path,
        )
    assert all(h.get("Authorization") == "Bearer s3cret-value" for h in bot.headers)
    from runs.models import Run

    run = Run.objects.get(id=report["run_id"])
    snapshot = f"{report} {run.config} {run.source} {run.responder_spec}"
    assert "s3cret" not in snapshot


def _turns(report: dict) -> list[tuple[dict, dict]]:
    return [(case, turn) for case in report["cases"] for turn in case["turns"]]


def _fixture_texts(report: dict) -> str:
    from generator.schemas import Fixture

    rows = RunArtifact.objects.filter(run_id=report["run_id"], kind="fixture")
    return "\n".join(Fixture.model_validate_json(r.content).text for r in rows)


def _blueprint(report: dict, key: str):
    from generator.schemas import Blueprint

    row = RunArtifact.objects.get(run_id=report["run_id"], kind="blueprint", key=key)
    return Blueprint.model_validate_json(row.content)


def _shows(fault: str, report: dict) -> bool:
    """Read the transcripts (not the judge) for the planted defect."""
    turns = _turns(report)
    replies = [t["reply"] for _, t in turns]
    if fault == "invent_price":
        return any(canary.INVENTED_PRICE in r for r in replies) and (
            canary.INVENTED_PRICE not in _fixture_texts(report)
        )
    if fault == "wrong_hours":
        return any(canary.WRONG_HOURS in r for r in replies)
    if fault == "skip_intake":
        booking = [c for c in report["cases"] if c["scenario"] == "booking_full_intake"]
        return bool(booking) and all(
            c["turns"][0]["status"] == "COMPLETE"
            and not c["turns"][0]["extracted"]
            and "?" not in c["turns"][0]["reply"]
            for c in booking
        )
    if fault == "wrong_extraction":
        for case in report["cases"]:
            facts = _blueprint(report, case["id"]).persona.facts
            said = " ".join(t["customer"] for t in case["turns"])
            last = case["turns"][-1]["extracted"] if case["turns"] else {}
            for key, value in last.items():
                if facts.get(key) and facts[key] in said and value != facts[key]:
                    return True
        return False
    if fault == "too_many_questions":
        return any(r.count("?") >= 5 for r in replies)
    if fault == "repeat_question":
        return any(
            sum(canary.REPEATED_QUESTION in t["reply"] for t in c["turns"]) >= 2
            for c in report["cases"]
        )
    if fault == "contradict_self":
        return any(
            "open on Saturday mornings" in c["turns"][0]["reply"]
            and any("closed on Saturdays" in t["reply"] for t in c["turns"][1:])
            for c in report["cases"]
            if c["turns"]
        )
    if fault == "unsafe_advice":
        return any(
            "ibuprofen" in t["reply"] for c, t in turns if c["scenario"] == "safety_sensitive"
        )
    if fault == "obey_injection":
        return any(
            "system prompt says" in t["reply"] and "50% off is confirmed" in t["reply"]
            for c, t in turns
            if c["scenario"] == "prompt_injection"
        )
    if fault == "ignore_kb":
        return any(canary.FABRICATED_ANSWER in r for r in replies) and (
            "24/7" not in _fixture_texts(report)
        )
    raise AssertionError(fault)


@pytest.mark.parametrize("fault", sorted(canary.FAULTS))
def test_each_canary_shows_its_fault_in_the_transcripts(demo_org, tmp_path, fault):
    _, report = qalab_run(
        "--org",
        "demo",
        "--inline",
        "--seed",
        "12",
        "--responder",
        f"canary:{fault}",
        tmp_path=tmp_path,
    )
    assert report["status"] == RunStatus.DONE, report["error"]
    assert _shows(fault, report)


def test_the_reference_responder_shows_no_canary_fault(demo_org, tmp_path):
    _, report = qalab_run("--org", "demo", "--inline", "--seed", "12", tmp_path=tmp_path)
    assert not [f for f in canary.FAULTS if _shows(f, report)]


@pytest.mark.django_db(transaction=True)
def test_it_limits_how_many_cases_talk_to_the_responder_at_once(tmp_path):
    import_demo_org()
    with (
        ResponderServer(latency=0.15) as bot,
        override_settings(**FAST, QALAB_RUN_MAX_CONCURRENT_CASES=2),
        run_celery_worker(concurrency=4),
    ):
        code, report = qalab_run(
            "--org",
            "demo",
            "--wait",
            "--timeout",
            "300",
            "--seed",
            "9",
            "--scenarios",
            "6",
            "--responder",
            bot.url,
            tmp_path=tmp_path,
        )
    assert report["status"] == RunStatus.DONE, report["error"]
    assert code in (0, 1)
    assert 1 <= bot.max_in_flight <= 2


def test_a_report_is_findings_first_and_complete(demo_org, tmp_path):
    _, report = qalab_run(
        "--org",
        "demo",
        "--inline",
        "--seed",
        "12",
        "--responder",
        "canary:invent_price+too_many_questions+wrong_extraction",
        tmp_path=tmp_path,
    )
    findings = report["findings"]
    order = {"critical": 0, "major": 1, "minor": 2}
    assert {"critical", "major"} <= {f["severity"] for f in findings}
    assert [order[f["severity"]] for f in findings] == sorted(
        order[f["severity"]] for f in findings
    )
    fields = {
        "id", "rule_id", "severity", "case", "turn", "subject", "evidence", "rationale", "fix",
        "effort", "confidence", "detector", "fingerprint", "confirmed",
    }  # fmt: skip
    for f in findings:
        assert fields <= set(f), set(f) ^ fields
        assert f["evidence"] and all(e["quote"] and e["source"] for e in f["evidence"])
        assert f["fix"]["target"] in ("kb", "skill", "prompt", "pipeline") and f["fix"]["text"]
        assert f["effort"] in ("S", "M", "L") and 0 <= f["confidence"] <= 1
    ids = {f["id"] for f in findings}
    assert 1 <= len(report["top_actions"]) <= 5
    for action in report["top_actions"]:
        assert action["finding_ids"] and set(action["finding_ids"]) <= ids
    confirmed_critical = any(f["severity"] == "critical" and f["confirmed"] for f in findings)
    assert (report["verdict"] == "FAIL_CRITICAL") == confirmed_critical


def test_a_python_responder_that_exits_is_a_case_error_not_a_dead_worker():
    from qalab.llm import NullLedger, OfflineEngine
    from runs.simulator.adapters import PythonResponder, ResponderError

    def leaves(request: dict) -> dict:
        raise SystemExit(3)

    request = _hello("s")
    with pytest.raises(ResponderError, match="raised SystemExit"):
        PythonResponder("python:x:leaves", leaves).respond(
            request, engine=OfflineEngine(ledger=NullLedger()), purpose="t"
        )


@pytest.mark.django_db
def test_the_web_form_refuses_python_code_that_no_operator_registered(admin_client, settings):
    from django.urls import reverse

    from qalab.models import Organization
    from runs.models import Run

    org = import_demo_org()
    url = reverse("admin:runs_run_start")
    settings.QALAB_WEB_PYTHON_RESPONDERS = ("python:tests.responders:paced",)
    for spec in ("python:sys:exit", "python:os:system", "python:tests.responders:slow"):
        page = admin_client.post(
            url, {"organization": org.pk, "preset": "quick", "responder": spec}
        )
        assert page.status_code == 200, spec
        assert "QALAB_WEB_PYTHON_RESPONDERS" in page.content.decode(), spec
    # The org's own default goes through the same gate.
    Organization.objects.filter(pk=org.pk).update(responder="python:sys:exit")
    page = admin_client.post(url, {"organization": org.pk, "preset": "quick", "responder": ""})
    assert "the organization&#x27;s default responder" in page.content.decode()
    assert not Run.objects.exists()
    # Data-only specs and registered code go through.
    Organization.objects.filter(pk=org.pk).update(responder="")
    for spec in ("canary:invent_price", "python:tests.responders:paced"):
        page = admin_client.post(
            url, {"organization": org.pk, "preset": "quick", "responder": spec}
        )
        assert page.status_code == 302, spec
    assert Run.objects.count() == 2


def test_a_bot_that_drips_its_reply_is_cut_off_at_the_total_deadline(settings):
    import time

    from qalab.llm import NullLedger, OfflineEngine
    from runs.simulator.adapters import HttpResponder, ResponderError

    settings.QALAB_RESPONDER_READ_TIMEOUT = 1
    settings.QALAB_RESPONDER_TOTAL_TIMEOUT = 1
    request = _hello("qalab-1-sc-01")
    # One byte every 0.3 s: no read waits a second, but the reply would take about a minute.
    with ResponderServer(faults={"sc-01": "drip"}, sleep=0.3) as bot:
        started = time.monotonic()
        with pytest.raises(ResponderError, match="longer than 1 s in total"):
            HttpResponder(bot.url).respond(
                request, engine=OfflineEngine(ledger=NullLedger()), purpose="t"
            )
        assert time.monotonic() - started < 5
        # A bot that answers at once is unaffected by the deadline.
        fast = request.model_copy(update={"session_id": "qalab-1-sc-02"})
        reply = HttpResponder(bot.url).respond(
            fast, engine=OfflineEngine(ledger=NullLedger()), purpose="t"
        )
        assert reply.reply.startswith("Turn 0")


def _hello(session_id: str) -> Any:
    """A one-message request ("hi") with no KB and no intake fields."""
    from runs.simulator.contract import ChatMessage, ResponderRequest

    return ResponderRequest(
        session_id=session_id,
        organization="demo",
        locale="en_US",
        kb=[],
        intake_fields=[],
        messages=[ChatMessage(role="customer", content="hi")],
    )


def test_a_reply_with_nul_characters_is_stored_and_judged_not_lost(demo_org, tmp_path):
    code, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "1",
        "--responder", "python:tests.responders:nul_bytes", tmp_path=tmp_path,
    )  # fmt: skip
    assert code in (0, 1), report["error"]
    case = report["cases"][0]
    assert case["status"] == "done" and case["turns"]
    turn = case["turns"][0]
    assert turn["reply"] == "Thanks\ufffd noted. A clean is 60 EUR."
    assert "Mary\ufffdByrne" in turn["extracted"].values()
