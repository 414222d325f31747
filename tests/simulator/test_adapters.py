"""Responder adapters: spec parsing, and validation of what a python responder returns."""

from __future__ import annotations

import pytest

from runs.simulator.adapters import ResponderError, get_responder
from runs.simulator.contract import ResponderReply
from tests.simulator.helpers import request

FAKES = "python:tests.simulator.fake_responders"


def _respond(spec, engine, *messages):
    return get_responder(spec).respond(request(*messages), engine=engine, purpose="test")


def test_the_reference_responder_answers_from_the_kb(ledger, engine):
    responder = get_responder("  reference ")
    assert responder.spec == "reference"
    reply = responder.respond(request("How much is a hygiene clean?"), engine=engine, purpose="t")
    assert isinstance(reply, ResponderReply)
    assert "80 EUR" in reply.reply
    assert [c["role"] for c in ledger.calls] == ["responder"]


def test_a_python_responder_returns_a_validated_reply(ledger, engine):
    reply = _respond("python:tests.responders:hostile", engine, "hello")
    assert isinstance(reply, ResponderReply)
    assert reply.reply == "<script>alert('x')</script> Thanks, noted."
    assert reply.status == "AWAITING_RESPONSE"
    assert reply.extracted == {}
    assert ledger.calls == []  # an in-process responder spends none of the lab's tokens


def test_a_python_responder_gets_the_request_as_plain_json(engine):
    reply = _respond(f"{FAKES}:echo", engine, "hi", "Hello!", "book me in")
    assert reply.reply == "You said: book me in"
    assert reply.extracted == {"full_name": "Ann Lee"}
    assert reply.status == "COMPLETE"
    assert not hasattr(reply, "debug")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gopher://x", "unknown responder spec 'gopher://x'"),
        ("python:nope", "unknown responder spec 'python:nope'"),
        ("python:tests.simulator.fake:", "unknown responder spec"),
        ("", "unknown responder spec ''"),
        (
            "python:tests.simulator.no_such_module:echo",
            "cannot import tests.simulator.no_such_module",
        ),
        (f"{FAKES}:missing", "has no function missing"),
        (f"{FAKES}:NOT_A_FUNCTION", "has no function NOT_A_FUNCTION"),
    ],
)
def test_an_unusable_spec_is_a_clear_value_error(spec, message):
    with pytest.raises(ValueError, match="responder") as info:
        get_responder(spec)
    assert message in str(info.value)


def test_an_unknown_spec_names_the_accepted_forms():
    with pytest.raises(ValueError) as info:
        get_responder("gopher://x")
    assert "reference" in str(info.value) and "python:package.module:function" in str(info.value)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("returns_list", "returned list, not a JSON object"),
        ("returns_none", "returned NoneType, not a JSON object"),
        ("wrong_shape", "outside the contract"),
        ("bad_status", "outside the contract"),
        ("bad_extracted", "outside the contract"),
        ("raises", "raised RuntimeError: backend unavailable"),
    ],
)
def test_a_python_responder_that_misbehaves_is_a_responder_error(engine, name, reason):
    spec = f"{FAKES}:{name}"
    with pytest.raises(ResponderError) as info:
        _respond(spec, engine, "hello")
    assert spec in str(info.value)
    assert reason in str(info.value)
