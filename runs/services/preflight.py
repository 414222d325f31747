"""Preflight: one harmless request to the bot under test before a token is spent.

A dead URL, a wrong path or a bot that speaks another contract would otherwise show only after
generation has spent thousands of tokens, when the first case fails. An external responder
(`http(s)://`, `python:`) gets one greeting in a session of its own; the lab's in-house
responders (`reference`, `canary:`) need no check. A failure ends the run `error` with the
reason and how to fix it; a success is recorded in the run's snapshot (`source.preflight`).
A bot of its own JSON shape is greeted through the run's mapping (`config.responder_http`), so
the recorded reply is the one the mapping reads: proof that the reply path finds the text.
"""

from __future__ import annotations

import time
from typing import Any

from qalab.llm import Engine
from qalab.redact import redact, redact_values
from runs.models import Run
from runs.simulator.adapters import get_responder
from runs.simulator.contract import ChatMessage, IntakeFieldRef, ResponderRequest

EXTERNAL_PREFIXES = ("http://", "https://", "python:")
GREETING = "Hello"


class PreflightError(Exception):
    """The responder is unreachable or answers outside the contract; the message says which."""


def preflight_request(run: Run) -> ResponderRequest:
    """The greeting a preflight sends: no KB, the org's intake fields, its own session id."""
    org = run.organization
    return ResponderRequest(
        session_id=f"qalab-{run.id}-preflight",
        organization=run.org_slug,
        locale=org.locale,
        kb=[],
        intake_fields=[
            IntakeFieldRef(key=f.key, label=f.label, required=f.required)
            for f in org.intake_fields.all()
        ],
        messages=[ChatMessage(role="customer", content=GREETING)],
    )


def responder_preflight(run: Run, *, engine: Engine) -> dict[str, Any] | None:
    """Greet an external responder once; its reply (redacted, cut short) and latency, or None
    when the responder is one of the lab's own. Raises PreflightError when it fails."""
    spec = run.responder_spec
    if not spec.startswith(EXTERNAL_PREFIXES):
        return None
    http = run.config.get("responder_http")
    started = time.monotonic()
    try:
        responder = get_responder(spec, http=http)
        reply = responder.respond(preflight_request(run), engine=engine, purpose="preflight")
    except Exception as exc:
        speaks = (
            "answers what the organization's responder_http mapping expects (org.yaml)"
            if http
            else "answers the responder contract"
        )
        raise PreflightError(
            redact(
                f"responder preflight failed, nothing generated and no tokens spent: {exc}. "
                f"Check that the bot is running at that address and {speaks} "
                "(docs/responders.md), then start a new run."
            )
        ) from exc
    return {
        "reply": redact(reply.reply)[:300],
        "status": reply.status or "",
        "extracted": redact_values(
            {k[:50]: v[:100] for k, v in list(reply.extracted.items())[:20]}
        ),
        "mapped": bool(http),
        "latency_ms": int((time.monotonic() - started) * 1000),
    }
