"""A bot of its own JSON shape is tested by mapping alone (issue 18, point 4): the org folder
says how to ask it and where its answer lies; the run sends its shape, stores the mapped
replies, snapshots the mapping, and the preflight shows the mapped reply."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

from qalab.models import Organization
from qalab.org_folder import DEMO_ORG_DIR
from runs.inline import InlineDispatcher
from runs.models import Run, RunStatus
from runs.report.delta import delta_build
from runs.services import run_create, run_start
from tests.foreign_bot import ForeignBot
from tests.responder_server import ResponderServer
from tests.runs.helpers import qalab_run

pytestmark = pytest.mark.django_db

OPENAI_MAPPING: dict[str, Any] = {
    "headers": {"X-Bot-Channel": "qalab"},
    "query": {"source": "qalab"},
    "request": {
        "model": "harbour-bot",
        "messages": [
            {"role": "system", "content": "You are the practice's assistant."},
            "{{...history}}",
        ],
        "user": "{{session_id}}",
    },
    "response": {
        "reply": "$.choices[0].message.content",
        "status": "$.meta.state",
        "status_map": {"open": "AWAITING_RESPONSE", "done": "COMPLETE"},
        "extracted": "$.meta.slots",
        "usage": {
            "prompt_tokens": "$.usage.prompt_tokens",
            "completion_tokens": "$.usage.completion_tokens",
        },
    },
}
RASA_MAPPING: dict[str, Any] = {
    "request": {"sender": "{{session_id}}", "message": "{{message}}"},
    "response": {
        "reply": "$[*].text",
        "status": "$[-1].custom.state",
        "status_map": {"open": "AWAITING_RESPONSE", "done": "COMPLETE"},
        "extracted": {"phone": "$[-1].custom.slots.phone_number"},
    },
}
STATUS = {"open": "AWAITING_RESPONSE", "done": "COMPLETE"}


def import_mapped_org(
    tmp_path: Path, url: str, mapping: dict[str, Any], slug: str = "foreign"
) -> Organization:
    """The demo org folder, copied, under `slug`, with the bot's URL and the mapping."""
    folder = tmp_path / f"org-{slug}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(DEMO_ORG_DIR, folder)
    data = yaml.safe_load((folder / "org.yaml").read_text())
    data.update(slug=slug, responder=url, responder_http=mapping)
    (folder / "org.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    call_command("qalab_import_org", str(folder), "--replace")
    return Organization.objects.get(slug=slug)


def _run(*args: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    code, report = qalab_run(
        "--org", "foreign", "--inline", "--scenarios", "2", "--seed", "5", *args, tmp_path=tmp_path
    )
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    return code, report


def test_an_openai_shaped_bot_is_tested_by_mapping_alone(db, tmp_path):
    with ForeignBot("openai") as bot:
        import_mapped_org(tmp_path, bot.url, OPENAI_MAPPING)
        _, report = _run(tmp_path=tmp_path)
    run_id = report["run_id"]
    assert report["responder"] == bot.url
    assert report["config"]["responder_http"]["response"] == {**OPENAI_MAPPING["response"]}
    # The bot got its own shape, every time: a system line, then the whole conversation.
    assert bot.paths and all(p == "/v1/chat/completions?source=qalab" for p in bot.paths)
    assert all(h["X-Bot-Channel"] == "qalab" for h in bot.headers)
    greeting = bot.requests[0]
    assert greeting == {
        "model": "harbour-bot",
        "messages": [
            {"role": "system", "content": "You are the practice's assistant."},
            {"role": "user", "content": "Hello"},
        ],
        "user": f"qalab-{run_id}-preflight",
    }
    assert len(report["cases"]) == 2
    for case in report["cases"]:
        session = f"qalab-{run_id}-{case['id']}"
        sent = [b for b in bot.requests if b["user"] == session]
        assert len(sent) == len(case["turns"]) >= 1
        conversation: list[dict[str, str]] = []
        for body, turn in zip(sent, case["turns"], strict=True):
            conversation.append({"role": "user", "content": turn["customer"]})
            assert set(body) == {"model", "messages", "user"}
            assert body["messages"] == [greeting["messages"][0], *conversation]
            conversation.append({"role": "assistant", "content": turn["reply"]})
        answers = bot.replies[session]
        assert [t["reply"] for t in case["turns"]] == [
            a["choices"][0]["message"]["content"] for a in answers
        ]
        assert [t["status"] for t in case["turns"]] == [STATUS[a["meta"]["state"]] for a in answers]
        assert [t["extracted"] for t in case["turns"]] == [a["meta"]["slots"] for a in answers]
        assert [t["usage"]["prompt_tokens"] for t in case["turns"]] == [
            a["usage"]["prompt_tokens"] for a in answers
        ]
    # The preflight greeted through the mapping and recorded the mapped reply.
    preflight = report["source"]["preflight"]
    assert preflight["reply"] == "Turn 0: noted 'Hello'. Anything else?"
    assert preflight["status"] == "AWAITING_RESPONSE" and preflight["extracted"] == {"name": "N0"}
    assert preflight["mapped"] is True


def test_a_rasa_shaped_bot_gets_sender_and_message_and_its_messages_are_joined(db, tmp_path):
    with ForeignBot("rasa") as bot:
        import_mapped_org(tmp_path, bot.url, RASA_MAPPING)
        _, report = _run(tmp_path=tmp_path)
    run_id = report["run_id"]
    assert bot.requests[0] == {"sender": f"qalab-{run_id}-preflight", "message": "Hello"}
    for case in report["cases"]:
        session = f"qalab-{run_id}-{case['id']}"
        assert [b for b in bot.requests if b["sender"] == session] == [
            {"sender": session, "message": t["customer"]} for t in case["turns"]
        ]
        for n, turn in enumerate(case["turns"]):
            assert turn["reply"] == f"Turn {n}: you said '{turn['customer'][:40]}'.\nAnything else?"
            assert turn["status"] == ("COMPLETE" if n >= 1 else "AWAITING_RESPONSE")
            assert turn["extracted"] == {"phone": f"+3531555{n:04d}"}
    assert report["source"]["preflight"]["reply"] == "Turn 0: you said 'Hello'.\nAnything else?"


def test_a_reply_without_the_path_is_that_cases_error_naming_the_path(db, tmp_path):
    with ForeignBot("openai", faults={"sc-02": "no_reply"}) as bot:
        import_mapped_org(tmp_path, bot.url, OPENAI_MAPPING)
        code, report = _run(tmp_path=tmp_path)
    assert code == 1  # a run with an errored case never passes
    cases = {c["id"]: c for c in report["cases"]}
    assert cases["sc-01"]["status"] == "done"
    broken = cases["sc-02"]
    assert broken["status"] == "error" and broken["turns"] == []
    assert (
        f"{bot.url}: reply path $.choices[0].message.content found nothing: "
        "$.choices has 0 item(s), no [0]; the bot answered an object of "
    ) in broken["error"]
    assert '"choices"' not in broken["error"]  # what the bot sent is not repeated (issue 33)


def test_a_wrong_reply_path_stops_the_run_in_preflight_naming_it(db, tmp_path):
    mapping = copy.deepcopy(OPENAI_MAPPING)
    mapping["response"]["reply"] = "$.choices[0].text"
    with ForeignBot("openai") as bot:
        import_mapped_org(tmp_path, bot.url, mapping)
        code, report = qalab_run(
            "--org", "foreign", "--inline", "--scenarios", "2", tmp_path=tmp_path
        )
    assert code == 4 and report["status"] == RunStatus.ERROR and report["tokens"]["used"] == 0
    assert (
        "reply path $.choices[0].text found nothing: $.choices[0] has no key 'text'"
        in report["error"]
    )
    assert "responder_http mapping" in report["error"]
    assert len(bot.requests) == 1


def test_the_run_keeps_the_mapping_it_was_made_with_and_the_delta_names_a_change(db, tmp_path):
    with ForeignBot("openai") as bot:
        org = import_mapped_org(tmp_path, bot.url, OPENAI_MAPPING)
        first = run_create(organization=org, scenarios=1, seed=5)
        # The org's mapping changes (and would break the bot) before the run is played.
        broken = copy.deepcopy(OPENAI_MAPPING)
        broken["response"]["reply"] = "$.answer"
        broken["headers"] = {"X-Bot-Channel": "other"}
        org = import_mapped_org(tmp_path, bot.url, broken)
        dispatcher = InlineDispatcher()
        run_start(run=first, dispatcher=dispatcher)
        dispatcher.drain()
        first.refresh_from_db()
        assert first.status == RunStatus.DONE, first.error
        assert first.config["responder_http"]["response"]["reply"] == "$.choices[0].message.content"
        assert all(h["X-Bot-Channel"] == "qalab" for h in bot.headers)
        assert (
            first.cases.get()
            .turns.order_by("index")
            .first()
            .responder_reply.startswith("Turn 0: noted")
        )
        second = run_create(organization=org, scenarios=1, seed=5)
    assert second.config["responder_http"]["response"]["reply"] == "$.answer"
    assert second.settings_hash != first.settings_hash
    delta = delta_build(run=second, other=first)
    assert delta is not None and delta.changed_inputs.settings_changed == ["responder_http"]
    assert second.source["org_context_sha256"] == first.source["org_context_sha256"]


def test_another_url_speaks_the_labs_contract_without_the_mapping(db, tmp_path):
    with ForeignBot("openai") as foreign, ResponderServer() as plain:
        import_mapped_org(tmp_path, foreign.url, OPENAI_MAPPING)
        code, report = qalab_run(
            "--org",
            "foreign",
            "--inline",
            "--scenarios",
            "1",
            "--responder",
            plain.url,
            tmp_path=tmp_path,
        )
    assert code in (0, 1), report["error"]
    assert "responder_http" not in report["config"] and not foreign.requests
    assert plain.requests[0]["messages"] == [{"role": "customer", "content": "Hello"}]
    assert report["source"]["preflight"]["mapped"] is False


def test_the_report_page_shows_the_mapping_and_the_mapped_preflight_reply(admin_client, tmp_path):
    with ForeignBot("rasa") as bot:
        import_mapped_org(tmp_path, bot.url, RASA_MAPPING)
        _, report = _run("--scenarios", "1", tmp_path=tmp_path)
    page = admin_client.get(
        reverse("admin:runs_run_report", args=[report["run_id"]])
    ).content.decode()
    assert "Preflight reply (mapped)" in page
    assert "Turn 0: you said &#x27;Hello&#x27;.\nAnything else?" in page
    assert "Responder mapping" in page and "POST · reply $[*].text" in page
    assert "status AWAITING_RESPONSE · phone=+35315550000" in page
    assert "extracted phone $[-1].custom.slots.phone_number" in page
    assert "status $[-1].custom.state (done→COMPLETE, open→AWAITING_RESPONSE)" in page
    assert (
        Run.objects.get(id=report["run_id"]).config["responder_http"]
        == Organization.objects.get(slug="foreign").responder_http
    )
