"""Responder adapters, chosen by a responder spec: `reference`, `http(s)://...`,
`python:pkg.mod:func`, `canary:<fault>[+<fault>...]` and `openai-chat:MODEL?prompt=...`
(`runs.simulator.openai_chat`).

Whatever an adapter gets back is untrusted: it is validated into a `ResponderReply` at the
edge, and anything that does not fit becomes a `ResponderError` (the case is marked `error`
with the reason; the rest of the run goes on).
"""

from __future__ import annotations

import contextlib
import http.client
import importlib
import json
import os
import re
import socket
import threading
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from pydantic import ValidationError

from qalab.domain import ResponderHttp
from qalab.llm import Engine
from runs.simulator.canary import CanaryResponder
from runs.simulator.contract import ResponderReply, ResponderRequest
from runs.simulator.http_mapping import (
    MappingError,
    contract_errors,
    mapped_reply,
    mapping_from,
    outgoing,
)
from runs.simulator.openai_chat import SPEC_FORM, OpenAIChatResponder, is_openai_chat, parse_spec
from runs.simulator.outbound import OutboundRefused, responder_refusal
from runs.simulator.outbound import connect as outbound_connect
from runs.simulator.reference import reference_respond

_PYTHON_SPEC = re.compile(r"^python:(?P<module>[A-Za-z_][\w.]*):(?P<func>[A-Za-z_]\w*)$")
SPEC_HELP = (
    "use 'reference', 'http(s)://host/path', 'python:package.module:function', "
    f"'canary:<fault>[+<fault>...]' or '{SPEC_FORM}'"
)


def web_spec_refusal(spec: str, *, python_allowed: tuple[str, ...]) -> str | None:
    """Why the web may not start a run with `spec` (None: it may). Imports nothing; resolves
    an http(s) responder's host name.

    `reference`, `canary:...`, `http(s)://...` and `openai-chat:...` are data, not code (an
    http(s) URL must point where the outbound policy allows); a `python:` spec runs code in the
    workers, so the web takes only those an operator registered
    in settings. An `openai-chat:` prompt file must be in QALAB_RESPONDER_PROMPT_DIRS.
    """
    spec = (spec or "").strip()
    if spec.startswith(("http://", "https://")):
        return responder_refusal(spec)  # the outbound policy, on the addresses it resolves to
    if spec == "reference" or spec.startswith("canary:"):
        return None
    if is_openai_chat(spec):
        try:
            parse_spec(spec, web=True)
        except ValueError as exc:
            return str(exc)
        return None
    if spec.startswith("python:"):
        if spec in python_allowed:
            return None
        return (
            f"responder {spec!r} runs Python code: the web form accepts only the python: "
            "responders registered in QALAB_WEB_PYTHON_RESPONDERS (the command line accepts any)"
        )
    return f"unknown responder spec {spec!r}: {SPEC_HELP}"


class ResponderError(Exception):
    """The responder failed or answered outside the contract."""


class Responder(Protocol):
    spec: str

    def respond(
        self, request: ResponderRequest, *, engine: Engine, purpose: str
    ) -> ResponderReply: ...


class ReferenceResponder:
    spec = "reference"

    def respond(self, request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
        return reference_respond(request, engine=engine, purpose=purpose)


class PythonResponder:
    """Calls `func(request: dict) -> dict` in process; the dict must fit the reply contract."""

    def __init__(self, spec: str, func: Callable[[dict[str, Any]], Any]) -> None:
        self.spec = spec
        self._func = func

    def respond(self, request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
        try:
            raw = self._func(request.model_dump(mode="json"))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise ResponderError(f"{self.spec} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(raw, dict):
            raise ResponderError(f"{self.spec} returned {type(raw).__name__}, not a JSON object")
        try:
            return ResponderReply.model_validate(raw)
        except ValidationError as exc:
            raise ResponderError(
                f"{self.spec} returned a reply outside the contract: {exc}"
            ) from exc


class HttpResponder:
    """POSTs the request as JSON to a URL and validates the JSON it gets back.

    Connect and read timeouts, a cap on the reply size, and an optional auth header whose value
    is read from the environment variable named by QALAB_RESPONDER_AUTH_ENV at call time (the
    spec and the run never hold it). With a `mapping` (org.yaml `responder_http`) it speaks the
    bot's own JSON shape instead of the contract (`runs.simulator.http_mapping`).
    """

    def __init__(self, spec: str, mapping: ResponderHttp | None = None) -> None:
        self.spec = spec
        self.mapping = mapping
        parsed = urlsplit(spec)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"responder {spec!r}: not an http(s) URL with a host")
        if parsed.username or parsed.password:
            raise ValueError(
                f"responder {spec!r}: credentials do not belong in the URL; put the header "
                "value in an environment variable and name it in QALAB_RESPONDER_AUTH_ENV"
            )
        self._parsed = parsed

    def _connection(self) -> http.client.HTTPConnection:
        from django.conf import settings

        host, port = self._parsed.hostname or "", self._parsed.port
        timeout = settings.QALAB_RESPONDER_CONNECT_TIMEOUT
        connection: http.client.HTTPConnection
        if self._parsed.scheme == "https":
            connection = http.client.HTTPSConnection(host, port, timeout=timeout)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=timeout)
        # Resolve, check every address against the outbound policy, connect to a checked one
        # (TLS still verifies the certificate against the host name).
        connection._create_connection = outbound_connect  # type: ignore[attr-defined]
        return connection

    def respond(self, request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
        from django.conf import settings

        body = request.model_dump_json().encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        method, body_or_none, query = "POST", body, self._parsed.query
        if self.mapping is not None:
            sent = outgoing(self.mapping, request)
            method, body_or_none = sent.method, sent.body
            headers.update(sent.headers)
            query = "&".join(part for part in (query, sent.query) if part)
        if settings.QALAB_RESPONDER_AUTH_ENV:
            value = os.environ.get(settings.QALAB_RESPONDER_AUTH_ENV, "")
            if not value:
                raise ResponderError(
                    f"the auth header value variable {settings.QALAB_RESPONDER_AUTH_ENV} is not set"
                )
            headers[settings.QALAB_RESPONDER_AUTH_HEADER] = value
        path = self._parsed.path or "/"
        if query:
            path = f"{path}?{query}"
        limit = settings.QALAB_RESPONDER_MAX_REPLY_BYTES
        total = settings.QALAB_RESPONDER_TOTAL_TIMEOUT
        too_slow = f"{self.spec} took longer than {total} s in total: reply cut off"
        # One text for every way of getting no HTTP answer (refused, unreachable, timed out,
        # another protocol): which ports of a host are open is not the lab's to tell.
        no_answer = (
            f"{self.spec} could not connect or got no HTTP reply in time (refused, unreachable, "
            "timed out or not an HTTP server)"
        )
        connection = self._connection()
        # The read timeout bounds each read; a bot that drips a byte now and then never trips
        # it. A timer cuts the connection once the whole reply has taken `total` seconds.
        expired = threading.Event()
        opened: list[socket.socket] = []  # the socket, kept: http.client may drop its own handle

        def cut_off() -> None:
            expired.set()
            for sock in opened:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(total, cut_off)
        timer.daemon = True
        timer.start()
        response: http.client.HTTPResponse | None = None
        try:
            connection.connect()
            # The connect timeout got us a socket; from here on the read timeout applies.
            if connection.sock is not None:
                connection.sock.settimeout(settings.QALAB_RESPONDER_READ_TIMEOUT)
                opened.append(connection.sock)
                if expired.is_set():  # the deadline passed while connecting
                    cut_off()
            connection.request(method, path, body=body_or_none, headers=headers)
            response = connection.getresponse()
            raw = response.read(limit + 1)
        except OutboundRefused as exc:
            raise ResponderError(f"{self.spec}: {exc}") from None
        except (OSError, http.client.HTTPException) as exc:
            if response is None:  # no HTTP status line came back
                raise ResponderError(no_answer) from exc
            if expired.is_set():
                raise ResponderError(too_slow) from exc
            if isinstance(exc, TimeoutError):
                raise ResponderError(f"{self.spec} timed out in the middle of its reply") from exc
            raise ResponderError(f"{self.spec} broke off its HTTP reply") from exc
        finally:
            timer.cancel()
            connection.close()
        if expired.is_set():
            raise ResponderError(too_slow)
        status = response.status
        # Nothing the host sent is repeated: not its error page, not its Location, not its
        # JSON. The text names the status and the contract field that is wrong.
        if 300 <= status < 400:
            raise ResponderError(
                f"{self.spec} answered HTTP {status}, a redirect: the lab follows none (the "
                "contract is a 200 with the JSON reply); give the bot's final URL"
            )
        if status >= 400 or status < 200:
            raise ResponderError(f"{self.spec} answered HTTP {status}")
        if len(raw) > limit:
            raise ResponderError(f"{self.spec} replied with more than {limit:,} bytes")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise ResponderError(
                f"{self.spec} did not reply JSON (HTTP {status}, {len(raw):,} bytes)"
            ) from exc
        if self.mapping is not None:
            try:
                return mapped_reply(self.mapping, data)
            except MappingError as exc:
                raise ResponderError(f"{self.spec}: {exc}") from exc
        if not isinstance(data, dict):
            raise ResponderError(f"{self.spec} replied {type(data).__name__}, not a JSON object")
        try:
            return ResponderReply.model_validate(data)
        except ValidationError as exc:
            raise ResponderError(
                f"{self.spec} replied outside the contract: {contract_errors(exc)}"
            ) from exc


def get_responder(spec: str, *, http: dict[str, Any] | None = None) -> Responder:
    """The adapter for `spec`; ValueError with a clear message when the spec is not usable.
    `http`: the mapping of an http(s) bot of its own JSON shape (a run's `responder_http`)."""
    spec = (spec or "").strip()
    mapping = mapping_from(http)
    if mapping is not None and not spec.startswith(("http://", "https://")):
        raise ValueError(f"responder {spec!r}: a responder_http mapping is for an http(s):// bot")
    if spec == "reference":
        return ReferenceResponder()
    if spec.startswith(("http://", "https://")):
        return HttpResponder(spec, mapping)
    if spec.startswith("canary:"):
        return CanaryResponder(spec)
    if is_openai_chat(spec):
        return OpenAIChatResponder(spec)
    match = _PYTHON_SPEC.match(spec)
    if match:
        try:
            module = importlib.import_module(match["module"])
        except ImportError as exc:
            raise ValueError(f"responder {spec!r}: cannot import {match['module']}: {exc}") from exc
        func = getattr(module, match["func"], None)
        if not callable(func):
            raise ValueError(
                f"responder {spec!r}: {match['module']} has no function {match['func']}"
            )
        return PythonResponder(spec, func)
    raise ValueError(f"unknown responder spec {spec!r}: {SPEC_HELP}")
