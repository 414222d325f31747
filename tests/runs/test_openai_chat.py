"""`openai-chat:` responders in whole runs: against the local OpenAI-compatible test server
(tokens under `responder`, replay, the JSON tail, the KB), on the offline engine, and the
spec's errors at the command line, in the Start run form and in a worker."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Sum
from django.test import override_settings

from qalab.llm.prompts import fence, untagged
from runs import services
from runs.inline import InlineDispatcher
from runs.models import LlmCall, Run, RunArtifact, RunStatus
from tests.factories import import_demo_org
from tests.llm_server import FakeOpenAI
from tests.runs.helpers import qalab_run
from tests.runs.test_openai_pipeline import notes_brain, openai_settings, schema_title

BOT = "bot-model-7"
PROMPT_FILE = "docs/prompts/demo-bot.md"
TAIL = '{{"status": "{status}", "extracted": {{"full_name": "Ann Lee"}}}}'
QUESTIONS = (
    "How much is a hygiene clean?",
    "Are you open on Saturday morning?",
    "Can I book a check-up? My name is Ann Lee.",
    "Do you do whitening, and what does it cost?",
    "What happens if I cancel the day before?",
)


class BillingOpenAI(FakeOpenAI):
    """The test server, adding up what it billed per model."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.billed: Counter[str] = Counter()

    def completion(self, body: dict[str, Any], fault: str) -> dict[str, Any]:
        reply = super().completion(body, fault)
        if "usage" in reply and fault != "timeout":
            with self._lock:
                self.billed[body.get("model", "")] += reply["usage"]["total_tokens"]
        return reply


def _bot_brain(tail_for_turn):
    """The bot under test writes prose and a tail; the lab's own roles get notes_brain."""

    def brain(body: dict) -> str | dict | None:
        if schema_title(body) == "CustomerMove":  # customers ask things the KB answers
            # fence tags are random per call: the digest reads the messages without them
            digest = hashlib.sha256(untagged(json.dumps(body["messages"])).encode()).digest()
            return {"message": QUESTIONS[digest[0] % len(QUESTIONS)]}
        if body.get("model") != BOT:
            return notes_brain(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "user")
        return f"Thanks for your message.\n{tail_for_turn(turn)}"

    return brain


def _good_tail(turn: int) -> str:
    return TAIL.format(status="COMPLETE" if turn >= 2 else "AWAITING_RESPONSE")


def _bot_requests(server: FakeOpenAI) -> list[dict]:
    return [b for b in server.requests if b.get("model") == BOT]


def _responder_tokens(run_id: int) -> int:
    rows = LlmCall.objects.filter(run_id=run_id, role="responder")
    return rows.aggregate(total=Sum("actual"))["total"] or 0


def _turns(report: dict) -> list[dict]:
    return [t for c in report["cases"] for t in c["turns"]]


def test_it_runs_a_quick_run_on_the_test_server_with_tokens_under_responder_and_replays(
    demo_org, tmp_path
):
    spec = f"openai-chat:{BOT}?prompt=file:{PROMPT_FILE}&kb=retrieve:2"
    args = ("--org", "demo", "--inline", "--seed", "21", "--scenarios", "2", "--responder", spec)
    with (
        BillingOpenAI(seed=21, brain=_bot_brain(_good_tail)) as server,
        openai_settings(server, QALAB_LLM_REPLAY_DIR=str(tmp_path / "replay")),
    ):
        code, first = qalab_run(*args, tmp_path=tmp_path)
        seen = len(server.requests)
        billed = server.billed[BOT]
        again_code, second = qalab_run(*args, tmp_path=tmp_path)
    assert code in (0, 1), first["error"]
    assert first["status"] == RunStatus.DONE and first["responder"] == spec
    assert {c["status"] for c in first["cases"]} == {"done"}
    # Tokens: the report, the ledger and the server agree on what the bot's model cost.
    responder = first["tokens"]["by_role"]["responder"]
    print(f"openai-chat run tokens by role: {first['tokens']['by_role']}")
    assert responder > 0
    assert responder == _responder_tokens(first["run_id"]) == billed
    # The whole run, as billed: the lab's roles and the bot, metered apart (issue 34).
    assert first["tokens"]["used"] + first["tokens"]["responder_used"] == server.usage_total
    # What the bot got: its model, no response format, the team's prompt, <= 2 KB passages.
    prompt = (Path(__file__).resolve().parents[2] / PROMPT_FILE).read_text().strip()
    bot_requests = _bot_requests(server)
    # One call per turn; a request identical to an earlier one (same prompt, KB and
    # conversation) is answered from the replay folder, metered as replayed.
    replayed = LlmCall.objects.filter(run_id=first["run_id"], role="responder", status="replayed")
    assert len(bot_requests) + replayed.count() == len(_turns(first))
    for body in bot_requests:
        assert "response_format" not in body
        system = body["messages"][0]
        assert system["role"] == "system" and system["content"].startswith(prompt)
        assert system["content"].count("<<<kb ") <= 2
        assert '"status": "AWAITING_RESPONSE"' in system["content"]  # the tail convention
    # A planned opener that names nothing in the KB ("hi, need to come in") retrieves nothing.
    assert any("<<<kb " in b["messages"][0]["content"] for b in bot_requests)
    # The tail is read into status and extracted, and cut from the stored reply.
    for turn in _turns(first):
        assert turn["reply"] == "Thanks for your message."
        assert turn["status"] == ("COMPLETE" if turn["index"] >= 1 else "AWAITING_RESPONSE")
        assert turn["extracted"] == {"full_name": "Ann Lee"}
    run = Run.objects.get(id=first["run_id"])
    digest = hashlib.sha256(prompt.encode()).hexdigest()
    assert run.source["prompts"][f"openai-chat/{PROMPT_FILE}"] == digest
    assert {"simulator/openai_chat/kb.v1", "simulator/openai_chat/tail.v1"} <= set(
        run.source["prompts"]
    )
    assert run.models_used["responder"] == BOT
    # The rerun replays every call: nothing sent, nothing spent, the same conversation.
    assert again_code == code, second["error"]
    assert len(server.requests) == seen
    assert second["tokens"]["used"] == 0 and second["tokens"]["by_role"]["responder"] == 0
    assert second["tokens"]["replayed"] > 0
    assert _responder_tokens(second["run_id"]) == 0
    assert [t["reply"] for t in _turns(second)] == [t["reply"] for t in _turns(first)]
    print(f"replayed rerun tokens: {second['tokens']['used']}")


def test_a_missing_or_broken_tail_leaves_status_empty_and_the_case_done(demo_org, tmp_path):
    def tail(turn: int) -> str:
        return "" if turn % 2 else '```json\n{"status": "COMPLETE", "extracted": {"full_na'

    spec = f"openai-chat:{BOT}?prompt=text:You are the front desk.&kb=none"
    with BillingOpenAI(seed=22, brain=_bot_brain(tail)) as server, openai_settings(server):
        code, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "22", "--scenarios", "2",
            "--responder", spec, tmp_path=tmp_path,
        )  # fmt: skip
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    assert {c["status"] for c in report["cases"]} == {"done"}
    turns = _turns(report)
    assert len(turns) >= 2
    for turn in turns:
        assert turn["reply"] == "Thanks for your message."
        assert turn["status"] is None and turn["extracted"] == {}
    assert all("<<<kb " not in b["messages"][0]["content"] for b in _bot_requests(server))


def test_kb_full_sends_the_case_fixture_fenced(demo_org, tmp_path):
    from generator.schemas import Fixture

    spec = f"openai-chat:{BOT}?prompt=text:You are the front desk.&kb=full"
    with BillingOpenAI(seed=23, brain=_bot_brain(_good_tail)) as server, openai_settings(server):
        _, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "23", "--scenarios", "2", "--budget",
            "300000", "--responder", spec, tmp_path=tmp_path,
        )  # fmt: skip
    assert report["status"] == RunStatus.DONE, report["error"]
    fixtures = [
        Fixture.model_validate_json(a.content)
        for a in RunArtifact.objects.filter(run_id=report["run_id"], kind="fixture")
    ]
    fenced = [
        [untagged(fence(f"[{d.id}] {d.title}\n{d.text}", "kb")) for d in fixture.documents]
        for fixture in fixtures
    ]
    bot_requests = _bot_requests(server)
    assert bot_requests
    for body in bot_requests:
        system = untagged(body["messages"][0]["content"])  # fence tags are random per call
        # Exactly one case's whole fixture, every document between its own fence lines.
        matches = [docs for docs in fenced if all(d in system for d in docs)]
        assert len(matches) == 1
        assert system.count("<<<kb>>>") == len(matches[0])


@override_settings(QALAB_OPENAI_CHAT_STAND_IN=True)  # the reference bot stands in, on purpose
def test_it_runs_on_the_offline_engine(demo_org, tmp_path):
    spec = f"openai-chat:?prompt=file:{PROMPT_FILE}&kb=retrieve:3"
    code, report = qalab_run(
        "--org", "demo", "--inline", "--seed", "24", "--scenarios", "2", "--responder", spec,
        tmp_path=tmp_path,
    )  # fmt: skip
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE and report["engine"] == "offline"
    assert report["tokens"]["by_role"]["responder"] == _responder_tokens(report["run_id"]) > 0
    turns = _turns(report)
    assert turns and all(t["status"] in ("AWAITING_RESPONSE", "COMPLETE") for t in turns)
    assert all('"status"' not in t["reply"] for t in turns)
    # Deterministic: the same seed gives the same conversation.
    _, again = qalab_run(
        "--org", "demo", "--inline", "--seed", "24", "--scenarios", "2", "--responder", spec,
        tmp_path=tmp_path,
    )  # fmt: skip
    assert [(t["reply"], t["status"]) for t in _turns(again)] == [
        (t["reply"], t["status"]) for t in turns
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai-chat:m?prompt=file:docs/prompts/missing.md", "does not exist"),
        ("openai-chat:m?prompt=file:/etc/hostname", "is outside the project"),
        ("openai-chat:m?prompt=text:x&kb=retrieve:99", "from 1 to 20"),
        ("openai-chat:m?prompt=text:x&temperature=0.2", "unknown option 'temperature'"),
    ],
)
def test_the_command_line_refuses_a_bad_spec_before_creating_a_run(demo_org, spec, message):
    with pytest.raises(CommandError) as caught:
        call_command("qalab_run", "--org", "demo", "--inline", "--responder", spec)
    assert caught.value.returncode == 2
    assert message in str(caught.value)
    assert not Run.objects.exists()


@pytest.mark.django_db
@override_settings(QALAB_OPENAI_CHAT_STAND_IN=True)  # the offline engine: the stand-in, on purpose
def test_the_start_form_takes_openai_chat_with_a_prompt_from_the_prompt_folders(admin_client):
    from django.urls import reverse

    org = import_demo_org()
    url = reverse("admin:runs_run_start")
    for path in ("README.md", "qalab/settings.py", "docs/prompts/../../README.md"):
        spec = f"openai-chat:m?prompt=file:{path}"
        page = admin_client.post(
            url, {"organization": org.pk, "preset": "quick", "responder": spec}
        )
        assert page.status_code == 200, path
        assert "QALAB_RESPONDER_PROMPT_DIRS" in page.content.decode(), path
    assert not Run.objects.exists()
    for spec in (
        f"openai-chat:m?prompt=file:{PROMPT_FILE}&kb=retrieve:2",
        "openai-chat?prompt=text:You are the front desk.&kb=full",
    ):
        page = admin_client.post(
            url, {"organization": org.pk, "preset": "quick", "responder": spec}
        )
        assert page.status_code == 302, spec
    assert sorted(Run.objects.values_list("responder_spec", flat=True)) == sorted(
        [
            f"openai-chat:m?prompt=file:{PROMPT_FILE}&kb=retrieve:2",
            "openai-chat?prompt=text:You are the front desk.&kb=full",
        ]
    )


def test_a_prompt_file_changed_after_the_run_was_created_errors_its_cases(demo_org, tmp_path):
    prompt = tmp_path / "bot.md"
    prompt.write_text("You are the front desk.")
    with override_settings(
        QALAB_RESPONDER_PROMPT_DIRS=(str(tmp_path),), QALAB_OPENAI_CHAT_STAND_IN=True
    ):
        run = services.run_create(
            organization=demo_org,
            responder_spec=f"openai-chat:?prompt=file:{prompt}",
            scenarios=2,
            seed=25,
        )
        prompt.write_text("You are a pirate.")
        dispatcher = InlineDispatcher()
        services.run_start(run=run, dispatcher=dispatcher)
        dispatcher.drain()
    run.refresh_from_db()
    cases = list(run.cases.all())
    assert cases and {c.status for c in cases} == {"error"}
    assert all("changed since run" in c.error for c in cases)
    assert not LlmCall.objects.filter(run=run, role="responder").exists()
