"""The `openai-chat:` responder without a database: its spec, prompt files, the messages it
sends, the JSON tail, and its calls through the offline and openai engines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qalab.llm import NullLedger, OfflineEngine, OpenAIEngine
from qalab.llm.prompts import fence, untagged
from runs.simulator.adapters import get_responder, web_spec_refusal
from runs.simulator.contract import KbEntry
from runs.simulator.json_tail import render_tail, split_tail
from runs.simulator.openai_chat import chat_messages, parse_spec
from tests.llm_server import FakeOpenAI
from tests.simulator.helpers import KB, request

DEMO_PROMPT = "docs/prompts/demo-bot.md"
TAIL = '{"status": "COMPLETE", "extracted": {"full_name": "Ann Lee"}}'


def _project_file(relative: str) -> str:
    from django.conf import settings

    return (Path(settings.BASE_DIR) / relative).read_text(encoding="utf-8").strip()


def test_it_reads_a_spec_with_a_prompt_file():
    chat = parse_spec(f"openai-chat:gpt-4o-mini?prompt=file:{DEMO_PROMPT}")
    assert chat.model == "gpt-4o-mini"
    assert chat.prompt == _project_file(DEMO_PROMPT)
    assert (chat.kb, chat.k) == ("retrieve", 4)  # the default
    assert list(chat.prompt_hashes) == [f"openai-chat/{DEMO_PROMPT}"]


@pytest.mark.parametrize(
    ("spec", "model", "prompt", "kb"),
    [
        ("openai-chat?prompt=text:Be brief&kb=full", "", "Be brief", ("full", 0)),
        ("openai-chat:?prompt=text:Tom%26Jerry%3A 50%&kb=none", "", "Tom&Jerry: 50%", ("none", 0)),
        (
            "openai-chat:ft:gpt-4o-mini:acme::x1?kb=retrieve:20&prompt=text:Hi",
            "ft:gpt-4o-mini:acme::x1",
            "Hi",
            ("retrieve", 20),
        ),
        (
            "openai-chat:qwen2.5:7b?prompt=text:Hi&kb=retrieve:1",
            "qwen2.5:7b",
            "Hi",
            ("retrieve", 1),
        ),
    ],
)
def test_the_model_may_be_left_out_and_values_are_percent_decoded(spec, model, prompt, kb):
    chat = parse_spec(spec)
    assert (chat.model, chat.prompt, (chat.kb, chat.k)) == (model, prompt, kb)
    assert chat.prompt_hashes == {}  # a text prompt is part of the spec itself


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai-chat:m", "give the bot's system prompt with prompt=file:PATH"),
        ("openai-chat:m?kb=full", "give the bot's system prompt"),
        ("openai-chat:m?prompt=text:x&temperature=1", "unknown option 'temperature'"),
        ("openai-chat:m?prompt=text:x&kb=retrieve:0", "whole number K from 1 to 20"),
        ("openai-chat:m?prompt=text:x&kb=retrieve:21", "whole number K from 1 to 20"),
        ("openai-chat:m?prompt=text:x&kb=retrieve:two", "whole number K from 1 to 20"),
        ("openai-chat:m?prompt=text:x&kb=retrieve:²", "whole number K from 1 to 20"),
        ("openai-chat:m?prompt=text:x&kb=retrieve", "whole number K from 1 to 20"),
        ("openai-chat:m?prompt=text:x&kb=all", "kb= takes retrieve:K, full or none"),
        ("openai-chat:m?prompt=text:a&prompt=text:b", "option 'prompt' is given twice"),
        ("openai-chat:m?prompt=system:x", "prompt= takes file:PATH or text:TEXT"),
        ("openai-chat:m?prompt=text:  ", "prompt=text: is empty"),
        ("openai-chat:m?prompt", "is not name=value"),
        ("openai-chat:two words?prompt=text:x", "is not a model name"),
        ("openai-chat:m?prompt=file:", "prompt=file: needs a path"),
        ("openai-chat:m?prompt=file:docs/prompts/nope.md", "does not exist or is not a file"),
        ("openai-chat:m?prompt=file:docs/prompts", "does not exist or is not a file"),
        ("openai-chat:m?prompt=file:docs", "does not exist or is not a file"),
        ("openai-chat:m?prompt=file:/etc/hostname", "is outside the project"),
        ("openai-chat:m?prompt=file:../outside.md", "is outside the project"),
        ("openai-chat:m?prompt=file:docs/../../x.md", "is outside the project"),
        ("openai-chat:m?prompt=file:.env.example", "hidden files and folders are not read"),
        ("openai-chat:m?prompt=file:.git/config", "hidden files and folders are not read"),
    ],
)
def test_a_bad_spec_is_refused_with_what_to_write(spec, message):
    with pytest.raises(ValueError, match=r"^responder 'openai-chat") as caught:
        get_responder(spec)
    assert message in str(caught.value)


def test_a_prompt_file_must_be_utf8_text_of_sensible_size(tmp_path, settings):
    settings.QALAB_RESPONDER_PROMPT_DIRS = (str(tmp_path),)
    cases = {"empty.md": b"  \n", "binary.md": b"\xff\xfe\x00", "big.md": b"x" * 64_001}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    for name, message in (("empty.md", "is empty"), ("binary.md", "not UTF-8"), ("big.md", "over")):
        with pytest.raises(ValueError, match=message):
            parse_spec(f"openai-chat:m?prompt=file:{tmp_path / name}")


def test_a_prompt_file_reached_through_a_symlink_is_refused(tmp_path, settings):
    settings.QALAB_RESPONDER_PROMPT_DIRS = (str(tmp_path / "prompts"),)
    prompts = tmp_path / "prompts"
    (prompts / "real").mkdir(parents=True)
    (prompts / "real" / "bot.md").write_text("You are kind.")
    (prompts / "link.md").symlink_to(prompts / "real" / "bot.md")
    (prompts / "linked").symlink_to(prompts / "real")
    (prompts / "out.md").symlink_to(Path(__file__))
    assert parse_spec(f"openai-chat:m?prompt=file:{prompts}/real/bot.md").prompt == "You are kind."
    for path in ("link.md", "linked/bot.md", "out.md"):
        with pytest.raises(ValueError, match="symbolic link"):
            parse_spec(f"openai-chat:m?prompt=file:{prompts / path}")


def test_the_web_form_takes_prompt_files_only_from_the_prompt_folders(tmp_path, settings):
    def refusal(spec):
        return web_spec_refusal(spec, python_allowed=())

    assert settings.QALAB_RESPONDER_PROMPT_DIRS == ("docs/prompts",)
    assert refusal(f"openai-chat:m?prompt=file:{DEMO_PROMPT}&kb=retrieve:2") is None
    assert refusal("openai-chat?prompt=text:You are kind.") is None
    # In the project and under the 64,000-byte prompt limit, so the command line may read it;
    # the web may not (settings, var/ ...).
    for path in ("pyproject.toml", "qalab/settings.py", "docs/prompts/../../qalab/settings.py"):
        spec = f"openai-chat:m?prompt=file:{path}"
        get_responder(spec)
        assert "web form reads prompt files only from there" in refusal(spec), path
        assert "QALAB_RESPONDER_PROMPT_DIRS" in refusal(spec)
    assert "unknown option" in refusal("openai-chat:m?prompt=text:x&top_p=1")
    # An operator adds a folder: files there are accepted by both.
    (tmp_path / "bot.md").write_text("You are kind.")
    settings.QALAB_RESPONDER_PROMPT_DIRS = (str(tmp_path),)
    assert refusal(f"openai-chat:m?prompt=file:{tmp_path}/bot.md") is None
    assert refusal(f"openai-chat:m?prompt=file:{DEMO_PROMPT}") is not None


def test_kb_full_puts_every_fixture_document_in_the_system_message_fenced():
    chat = parse_spec("openai-chat:m?prompt=text:Be kind.&kb=full")
    messages = chat_messages(chat, request("How much is a hygiene clean?", "80 EUR.", "Thanks"))
    system = messages[0]["content"]
    assert messages[0]["role"] == "system" and system.startswith("Be kind.")
    for entry in KB:
        assert untagged(fence(f"[{entry.id}] {entry.title}\n{entry.text}", "kb")) in untagged(
            system
        )
    assert system.count("<<<kb ") == len(KB)
    assert "untrusted" in system
    assert "full_name (Full name, required)" in system and "email (Email address)" in system
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user"]
    assert messages[-1]["content"] == "Thanks"


def test_kb_retrieve_sends_at_most_k_passages_for_the_latest_message():
    kb = [
        *KB,
        *(
            KbEntry(id=f"doc{n}", title=f"Clean {n}", text=f"Hygiene clean note {n}.")
            for n in range(6)
        ),
    ]
    chat = parse_spec("openai-chat:m?prompt=text:Be kind.&kb=retrieve:2")
    system = chat_messages(
        chat, request("When are you open?", "Hi", "hygiene clean price?", kb=kb)
    )[0]["content"]
    assert system.count("<<<kb ") == 2
    assert "Hygiene clean" in system and "Opening hours" not in system  # the latest message
    none = parse_spec("openai-chat:m?prompt=text:Be kind.&kb=none")
    assert "<<<kb " not in chat_messages(none, request("When are you open?"))[0]["content"]


@pytest.mark.parametrize(
    ("text", "reply", "status", "extracted"),
    [
        (f"Booked.\n{TAIL}", "Booked.", "COMPLETE", {"full_name": "Ann Lee"}),
        (f"Booked.\n```json\n{TAIL}\n```\n", "Booked.", "COMPLETE", {"full_name": "Ann Lee"}),
        ('Ok.\n```\n{"status": "awaiting response",}\n```', "Ok.", "AWAITING_RESPONSE", {}),
        (
            'Ok.\n{"extracted": {"a": 4, "b": true, "c": null, "d": [1], "e": " "}}',
            "Ok.",
            None,
            {"a": "4", "b": "true"},
        ),
        ('Ok.\n{"status": "DONE", "extracted": "Ann"}', "Ok.", None, {}),
        (
            'Use {name} here.\n{"status": "COMPLETE", "extracted": {"n": "a\nb"}}',
            "Use {name} here.",
            "COMPLETE",
            {"n": "a\nb"},
        ),
        ("No tail at all.", "No tail at all.", None, {}),
        ('Cut off.\n{"status": "COMPLETE", "extracted": {"full_na', "Cut off.", None, {}),
        ('Cut off.\n```json\n{"status": "COMP', "Cut off.", None, {}),
        (
            'Misplaced.\n{"status": "COMPLETE"}\nBye!',
            'Misplaced.\n{"status": "COMPLETE"}\nBye!',
            None,
            {},
        ),
        (
            'A {"status": "x"} inside a sentence, then more',
            'A {"status": "x"} inside a sentence, then more',
            None,
            {},
        ),
    ],
)
def test_it_reads_the_json_tail_leniently(text, reply, status, extracted):
    tail = split_tail(text)
    assert (tail.reply, tail.status, tail.extracted) == (reply, status, extracted)


def test_a_rendered_tail_reads_back():
    tail = split_tail(render_tail("Hello", "AWAITING_RESPONSE", {"phone": "+353 1 555 0142"}))
    assert (tail.reply, tail.status, tail.extracted) == (
        "Hello",
        "AWAITING_RESPONSE",
        {"phone": "+353 1 555 0142"},
    )


def test_with_the_offline_engine_the_reference_bot_stands_in_for_the_model():
    ledger = NullLedger()
    engine = OfflineEngine(ledger=ledger)
    responder = get_responder("openai-chat?prompt=text:Be kind.&kb=full")
    req = request("Hi, I'd like to book a hygiene clean. I'm Ann Lee.")
    first = responder.respond(req, engine=engine, purpose="t")
    again = responder.respond(req, engine=engine, purpose="t")
    reference = get_responder("reference").respond(
        req, engine=OfflineEngine(ledger=NullLedger()), purpose="t"
    )
    assert first.model_dump(exclude={"usage"}) == again.model_dump(exclude={"usage"})
    assert (first.reply, first.status, first.extracted) == (
        reference.reply,
        reference.status,
        reference.extracted,
    )
    assert first.extracted.get("full_name") == "Ann Lee"
    assert [c["role"] for c in ledger.calls] == ["responder", "responder"]
    assert ledger.used == 2 * (first.usage.prompt_tokens + first.usage.completion_tokens) > 0


def test_it_calls_the_model_through_the_openai_engine_and_replays(tmp_path):
    def brain(body):
        return f"Happy to help, Ann.\n```json\n{TAIL}\n```"

    with FakeOpenAI(brain=brain) as server:

        def engine(ledger):
            return OpenAIEngine(
                ledger=ledger,
                models={"responder": "default-model"},
                base_url=server.base_url,
                api_key="test",
                replay_dir=tmp_path,
            )

        ledger = NullLedger()
        live = engine(ledger)
        req = request("Book me in please, I'm Ann Lee")
        reply = get_responder("openai-chat:bot-1?prompt=text:Be kind.").respond(
            req, engine=live, purpose="t"
        )
        unnamed = get_responder("openai-chat?prompt=text:Be kind.").respond(
            req, engine=live, purpose="t"
        )
        live.close()
        replayed_ledger = NullLedger()
        replayer = engine(replayed_ledger)
        replayed = get_responder("openai-chat:bot-1?prompt=text:Be kind.").respond(
            req, engine=replayer, purpose="t"
        )
        replayer.close()
        requests = server.requests
    assert (reply.reply, reply.status, reply.extracted) == (
        "Happy to help, Ann.",
        "COMPLETE",
        {"full_name": "Ann Lee"},
    )
    assert [b["model"] for b in requests] == ["bot-1", "default-model"]
    assert all("response_format" not in b for b in requests)
    assert requests[0]["messages"][0]["content"].startswith("Be kind.")
    assert requests[0]["messages"][1:] == [
        {"role": "user", "content": "Book me in please, I'm Ann Lee"}
    ]
    assert [c["role"] for c in ledger.calls] == ["responder", "responder"]
    assert ledger.used == server.usage_total
    usage = reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert usage + unnamed.usage.prompt_tokens + unnamed.usage.completion_tokens == ledger.used
    # The replay spends nothing and reads the same reply.
    assert replayed.model_dump(exclude={"usage"}) == reply.model_dump(exclude={"usage"})
    assert replayed_ledger.used == 0
    assert [c["status"] for c in replayed_ledger.calls] == ["replayed"]
    assert len(os.listdir(tmp_path)) == 2
