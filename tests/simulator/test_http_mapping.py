"""The mapping of a bot of its own JSON shape, without a network: paths, templates, replies."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qalab.domain import ResponderHttp
from qalab.json_mapping import PathMissing, PathSyntaxError, parse_path, render, resolve
from runs.simulator.adapters import get_responder
from runs.simulator.contract import ChatMessage, IntakeFieldRef, KbEntry, ResponderRequest
from runs.simulator.http_mapping import MappingError, mapped_reply, outgoing

DOC = {
    "choices": [{"message": {"content": "Hi there"}}],
    "a key": {"it's": [1, 2, {"x": "y"}]},
    "list": [{"text": "one"}, {"other": 1}, {"text": "two"}],
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("$", DOC),
        ("$.choices[0].message.content", "Hi there"),
        ("$['a key']['it\\'s'][-1].x", "y"),
        ('$["a key"]["it\'s"][1]', 2),
        ("$.list[*].text", ["one", "two"]),
        ("$.list[*]", DOC["list"]),
    ],
)
def test_a_path_reads_keys_indexes_quoted_keys_and_every_item(path: str, value: Any) -> None:
    assert resolve(path, DOC) == value


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("choices[0]", "starts with '$'"),
        ("$.choices[0", "position 9"),
        ("$.a..b", "position 3"),
        ("$[__import__('os')]", "position 1"),
        ("$.a b", "unexpected ' ' at position 3"),
        ("$['open", "unclosed quoted key"),
        ("$" + ".a" * 300, "longer than 500"),
    ],
)
def test_a_bad_path_is_a_syntax_error_naming_where(path: str, where: str) -> None:
    with pytest.raises(PathSyntaxError, match=None) as exc:
        parse_path(path)
    assert where in str(exc.value)


@pytest.mark.parametrize(
    ("path", "stopped"),
    [
        ("$.choices[1].message", "$.choices has 1 item(s), no [1]"),
        ("$.choices[0].msg", "$.choices[0] has no key 'msg' (its keys: message)"),
        ("$.choices.message", "$.choices is a list, not an object"),
        ("$['a key'][0]", "$['a key'] is an object, not a list"),
        ("$.__class__", "$ has no key '__class__'"),
    ],
)
def test_a_path_that_finds_nothing_says_where_it_stopped(path: str, stopped: str) -> None:
    with pytest.raises(PathMissing) as exc:
        resolve(path, DOC)
    assert stopped in str(exc.value)


def test_a_template_fills_whole_values_text_and_splices() -> None:
    template = {
        "messages": [{"role": "system", "content": "Be kind"}, "{{...history}}"],
        "all": "{{history}}",
        "note": "session {{ session_id }} of {{organization}}",
        "n": 3,
        "flag": None,
    }
    values = {"history": [{"role": "user", "content": "hi"}], "session_id": "s-1"}
    values["organization"] = "demo"
    assert render(template, values) == {
        "messages": [{"role": "system", "content": "Be kind"}, {"role": "user", "content": "hi"}],
        "all": [{"role": "user", "content": "hi"}],
        "note": "session s-1 of demo",
        "n": 3,
        "flag": None,
    }


def _request(*messages: tuple[str, str]) -> ResponderRequest:
    return ResponderRequest(
        session_id="qalab-7-sc-01",
        organization="demo",
        locale="en_IE",
        kb=[KbEntry(id="kb-1", title="Prices", text="Clean 80 EUR")],
        intake_fields=[IntakeFieldRef(key="phone", label="Phone", required=True)],
        messages=[ChatMessage(role=role, content=text) for role, text in messages],  # type: ignore[arg-type]
    )


def _mapping(**overrides: Any) -> ResponderHttp:
    data: dict[str, Any] = {
        "request": {"message": "{{message}}", "session": "{{session_id}}"},
        "response": {"reply": "$.reply"},
    }
    data.update(overrides)
    return ResponderHttp.model_validate(data)


def test_the_request_is_the_bots_own_shape() -> None:
    mapping = _mapping(
        request={
            "messages": "{{history}}",
            "before": "{{history_before}}",
            "latest": "{{message}}",
            "context": "{{kb_text}}",
            "docs": "{{kb}}",
            "fields": "{{intake_keys}}",
        },
        history={
            "roles": {"customer": "human", "assistant": "ai"},
            "item": {"from": "{{role}}", "says": "{{content}}"},
        },
        headers={"X-Session": "{{session_id}}", "X-Channel": "qa"},
        query={"lang": "{{locale}}", "q": "{{message}}"},
        method="put",
    )
    sent = outgoing(
        mapping,
        _request(("customer", "Hi"), ("assistant", "Hello!"), ("customer", "Price & time?")),
    )
    body = json.loads(sent.body or b"")
    assert sent.method == "PUT"
    assert body["messages"] == [
        {"from": "human", "says": "Hi"},
        {"from": "ai", "says": "Hello!"},
        {"from": "human", "says": "Price & time?"},
    ]
    assert body["before"] == body["messages"][:2] and body["latest"] == "Price & time?"
    assert body["context"] == "# Prices\n\nClean 80 EUR"
    assert body["docs"] == [{"id": "kb-1", "title": "Prices", "text": "Clean 80 EUR"}]
    assert body["fields"] == ["phone"]
    assert sent.headers == {"X-Session": "qalab-7-sc-01", "X-Channel": "qa"}
    assert sent.query == "lang=en_IE&q=Price+%26+time%3F"


def test_a_get_sends_no_body() -> None:
    mapping = _mapping(method="GET", request=None, query={"q": "{{message}}"})
    sent = outgoing(mapping, _request(("customer", "Hi")))
    assert sent.body is None and sent.query == "q=Hi"


def test_the_reply_status_fields_and_usage_are_read_through_the_paths() -> None:
    mapping = _mapping(
        response={
            "reply": "$[*].text",
            "status": "$[-1].custom.state",
            "status_map": {"done": "COMPLETE", "open": "AWAITING_RESPONSE", "handoff": None},
            "extracted": {
                "phone": "$[-1].custom.slots.tel",
                "size": "$[-1].custom.slots.n",
                "gone": "$[-1].x",
            },
            "usage": {"prompt_tokens": "$[-1].custom.tokens"},
        }
    )
    data = [
        {"text": "Booked."},
        {"text": "See you!"},
        {"custom": {"state": "done", "slots": {"tel": "+353 1", "n": 2}, "tokens": 12}},
    ]
    reply = mapped_reply(mapping, data)
    assert reply.reply == "Booked.\nSee you!"
    assert reply.status == "COMPLETE"
    assert reply.extracted == {"phone": "+353 1", "size": "2"}
    assert reply.usage is not None and reply.usage.prompt_tokens == 12
    data[-1]["custom"]["state"] = "handoff"
    assert mapped_reply(mapping, data).status is None
    data[-1]["custom"]["state"] = "COMPLETE"  # the lab's own word needs no map
    assert mapped_reply(mapping, data).status == "COMPLETE"


def test_a_whole_object_of_fields_becomes_text_values() -> None:
    mapping = _mapping(response={"reply": "$.r", "extracted": "$.slots"})
    reply = mapped_reply(mapping, {"r": "ok", "slots": {"a": 1, "b": True, "c": None, "d": "x"}})
    assert reply.extracted == {"a": "1", "b": "true", "d": "x"}
    assert mapped_reply(mapping, {"r": "ok"}).extracted == {}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"answer": "hi"},
            "reply path $.reply found nothing: $ has no key 'reply'; the bot answered an "
            "object of 1 key",
        ),
        ({"reply": None}, "reply path $.reply is null; the bot answered an object of 1 key"),
        ({"reply": 42}, "reply path $.reply holds a number, not text"),
    ],
)
def test_a_reply_missing_from_its_path_is_an_error_naming_it(data: Any, message: str) -> None:
    with pytest.raises(MappingError) as exc:
        mapped_reply(_mapping(), data)
    assert message in str(exc.value)


def test_an_error_never_repeats_what_the_bot_sent() -> None:
    """Issue 33: the text reaches the report and its exports; what a host the run could not use
    sent back (keys or values) is not repeated."""
    with pytest.raises(MappingError) as exc:
        mapped_reply(_mapping(), {"answer": "x" * 5000, "internal_key": 1})
    assert "x" * 10 not in str(exc.value) and "internal_key" not in str(exc.value)
    assert len(str(exc.value)) < 200


def test_an_unknown_status_or_fields_that_are_no_object_are_errors() -> None:
    mapping = _mapping(
        response={"reply": "$.r", "status": "$.s", "status_map": {"done": "COMPLETE"}}
    )
    with pytest.raises(
        MappingError,
        match=r"the status at \$.s \(a text\) is neither in status_map \(known: 'done'\)",
    ):
        mapped_reply(mapping, {"r": "ok", "s": "weird"})
    mapping = _mapping(response={"reply": "$.r", "extracted": "$.slots"})
    with pytest.raises(
        MappingError, match=r"extracted path \$.slots holds a list of 1 item, not an object"
    ):
        mapped_reply(mapping, {"r": "ok", "slots": [1]})


def test_a_mapping_belongs_to_an_http_bot_only() -> None:
    http = _mapping().model_dump(mode="json")
    assert get_responder("http://127.0.0.1:9/chat", http=http).mapping == _mapping()  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="a responder_http mapping is for an http"):
        get_responder("reference", http=http)
    with pytest.raises(ValueError, match="responder_http mapping is not valid"):
        get_responder("http://127.0.0.1:9/chat", http={"response": {"reply": "nope"}})
