"""Responders for adapter tests, reachable as `python:tests.simulator.fake_responders:<name>`."""

from __future__ import annotations

NOT_A_FUNCTION = "a string attribute, not a responder"


def echo(request):
    """A well-behaved responder: echoes the last customer message, with an extra key."""
    last = request["messages"][-1]["content"]
    return {
        "reply": f"You said: {last}",
        "extracted": {"full_name": "Ann Lee"},
        "status": "COMPLETE",
        "debug": "extra keys are ignored",
    }


def returns_list(request):
    return ["not", "a", "dict"]


def returns_none(request):
    return None


def wrong_shape(request):
    return {"text": "the reply is under the wrong key"}


def bad_status(request):
    return {"reply": "Done.", "status": "FINISHED"}


def bad_extracted(request):
    return {"reply": "Noted.", "extracted": {"phone": ["+353", "1234567"]}}


def raises(request):
    raise RuntimeError("backend unavailable")
