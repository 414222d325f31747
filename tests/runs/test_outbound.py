"""The outbound policy for http(s):// responders (issue 33, item 2 and the 302 of item 7).

Where a responder may point (QALAB_RESPONDER_ALLOWED_HOSTS; public addresses only by default),
checked on every resolved address when a run is created and again when the lab connects; no
redirect followed; error texts that name the status and the contract field and never repeat
what the host sent; one text for every way a connection fails.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from qalab.llm import NullLedger, OfflineEngine
from runs.simulator.contract import ChatMessage, ResponderRequest
from tests.factories import import_demo_org
from tests.responder_server import ResponderServer

SETTING = "QALAB_RESPONDER_ALLOWED_HOSTS"
SECRET = "s3cr3t-internal-data"
FORBIDDEN = (
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://10.1.2.3/chat",  # private
    "http://192.168.0.10:8080/chat",  # private
    "http://127.0.0.1:6379/",  # loopback (Redis)
    "http://localhost:5432/",  # loopback, by name
    "http://[::1]:8000/",  # loopback, IPv6
    "http://[::ffff:169.254.169.254]/",  # metadata, as an IPv4-mapped IPv6 address
    "http://0.0.0.0:8000/",  # unspecified
    "http://224.0.0.1/",  # multicast
    "http://[fe80::1]/",  # link-local
    "http://2130706433/",  # 127.0.0.1 written as one number
)


def _hello() -> ResponderRequest:
    return ResponderRequest(
        session_id="qalab-1-sc-01",
        organization="demo",
        locale="en_US",
        kb=[],
        intake_fields=[],
        messages=[ChatMessage(role="customer", content="hi")],
    )


def _call(spec: str, http: dict[str, Any] | None = None) -> Any:
    from runs.simulator.adapters import get_responder

    return get_responder(spec, http=http).respond(
        _hello(), engine=OfflineEngine(ledger=NullLedger()), purpose="t"
    )


def _error(spec: str, http: dict[str, Any] | None = None) -> str:
    from runs.simulator.adapters import ResponderError

    with pytest.raises(ResponderError) as caught:
        _call(spec, http)
    return str(caught.value)


@contextmanager
def _server(status: int, body: bytes, headers: dict[str, str] | None = None) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that answers every request with `status` and `body`."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            hits.append(self.path)
            length = int(self.headers.get("Content-Length", 0))
            self.rfile.read(length)
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET = _answer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# -- where a responder may point ---------------------------------------------------------------


@pytest.mark.parametrize("spec", FORBIDDEN)
def test_a_non_public_address_is_refused_by_default(spec, settings):
    from runs.simulator.outbound import responder_refusal

    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ()
    refusal = responder_refusal(spec)
    assert refusal and SETTING in refusal, spec


def test_every_resolved_address_is_checked(settings, monkeypatch):
    """A name with one public and one private address is refused: the lab might reach either."""
    from runs.simulator import outbound

    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ()
    monkeypatch.setattr(outbound, "resolve", _resolving({"bot.example": ["93.184.216.34"]}))
    assert outbound.responder_refusal("https://bot.example/chat") is None
    monkeypatch.setattr(
        outbound, "resolve", _resolving({"bot.example": ["93.184.216.34", "10.0.0.7"]})
    )
    refusal = outbound.responder_refusal("https://bot.example/chat")
    assert refusal and "10.0.0.7" in refusal and "private" in refusal and SETTING in refusal


def test_the_allow_list_takes_networks_and_host_names(settings, monkeypatch):
    from runs.simulator import outbound

    monkeypatch.setattr(
        outbound, "resolve", _resolving({"bot.internal": ["10.0.0.7"], "other": ["10.9.0.1"]})
    )
    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ("10.0.0.0/24",)
    assert outbound.responder_refusal("http://bot.internal/chat") is None
    assert outbound.responder_refusal("http://other/chat")
    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ("other",)
    assert outbound.responder_refusal("http://other/chat") is None
    assert outbound.responder_refusal("http://bot.internal/chat")
    assert outbound.responder_refusal("http://169.254.169.254/")


def test_the_setting_is_validated(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from qalab.env import envhosts

    monkeypatch.setenv(SETTING, " 10.0.0.0/8, Bot.Internal. ,::1 ,")
    assert envhosts(SETTING) == ("10.0.0.0/8", "bot.internal", "::1/128")
    for bad in ("10.0.0.0/33", "http://bot", "bot internal", "-x"):
        monkeypatch.setenv(SETTING, bad)
        with pytest.raises(ImproperlyConfigured, match=SETTING):
            envhosts(SETTING)


@pytest.mark.django_db
def test_the_web_form_refuses_non_public_addresses_naming_the_setting(admin_client, settings):
    from django.urls import reverse

    from runs.models import Run

    org = import_demo_org()
    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ()
    for spec in FORBIDDEN[:4]:
        page = admin_client.post(
            reverse("admin:runs_run_start"),
            {"organization": org.pk, "preset": "quick", "responder": spec},
        )
        assert page.status_code == 200, spec
        assert SETTING in page.content.decode(), spec
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_the_cli_refuses_non_public_addresses_exit_2_and_no_run(settings):
    from runs.models import Run

    import_demo_org()
    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ()
    for spec in ("http://169.254.169.254/latest/", "http://127.0.0.1:9/chat"):
        with pytest.raises(CommandError) as caught:
            call_command("qalab_run", "--org", "demo", "--inline", "--responder", spec)
        assert caught.value.returncode == 2 and SETTING in str(caught.value), spec
    assert not Run.objects.exists()


def test_the_address_is_checked_again_when_the_lab_connects(settings, monkeypatch):
    """DNS rebinding: the name points at an allowed bot when the run is created and at the
    metadata address when a turn is played. The call is refused and nothing is sent."""
    from runs.simulator import outbound

    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ("127.0.0.0/8",)
    with ResponderServer() as bot:
        port = int(bot.url.split(":")[2].split("/")[0])
        spec = f"http://rebind.example:{port}/chat"
        answers = iter([["127.0.0.1"], ["169.254.169.254"]])
        real = outbound.resolve

        def rebinding(host: str, port: int) -> Any:
            return real(next(answers)[0], port)

        monkeypatch.setattr(outbound, "resolve", rebinding)
        assert outbound.responder_refusal(spec) is None  # at creation: 127.0.0.1, allowed
        error = _error(spec)  # at call time: 169.254.169.254
        assert "169.254.169.254" in error and SETTING in error
        assert bot.requests == []


def test_the_lab_connects_to_the_address_it_checked(settings, monkeypatch):
    """The checked address is the one connected to: a name resolving to the test bot works
    though the system resolver has never heard of it."""
    from runs.simulator import outbound

    settings.QALAB_RESPONDER_ALLOWED_HOSTS = ("127.0.0.0/8",)
    real = outbound.resolve
    monkeypatch.setattr(outbound, "resolve", lambda host, port: real("127.0.0.1", port))
    with ResponderServer() as bot:
        port = int(bot.url.split(":")[2].split("/")[0])
        reply = _call(f"http://no-such-name.invalid:{port}/chat")
    assert reply.reply.startswith("Turn 0") and len(bot.requests) == 1


# -- what the lab accepts and says back ----------------------------------------------------------


def test_a_redirect_is_a_contract_error_and_is_not_followed():
    """A 302 whose body is a valid reply is not taken as the bot's reply."""
    body = json.dumps({"reply": "I am the redirect's body"}).encode()
    with _server(302, body, {"Location": "http://169.254.169.254/"}) as base:
        error = _error(f"{base}/chat")
    assert "HTTP 302" in error and "redirect" in error
    assert "169.254.169.254" not in error and "redirect's body" not in error


@pytest.mark.parametrize(
    "status, body, says",
    [
        (500, f"Internal error: {SECRET}".encode(), "HTTP 500"),
        (404, json.dumps({"detail": SECRET}).encode(), "HTTP 404"),
        (200, f"<html>{SECRET}</html>".encode(), "did not reply JSON"),
        (200, json.dumps({"reply": {"data": SECRET}}).encode(), "reply"),
        (200, json.dumps({"reply": "ok", "status": SECRET}).encode(), "status"),
        (200, json.dumps({"reply": "ok", "extracted": {SECRET: 1}}).encode(), "extracted"),
        (200, json.dumps({"answer": SECRET}).encode(), "reply"),
        (200, json.dumps([SECRET]).encode(), "not a JSON object"),
    ],
)
def test_an_error_names_the_status_and_field_and_never_repeats_the_body(status, body, says):
    with _server(status, body) as base:
        error = _error(f"{base}/chat")
    assert says in error and SECRET not in error, error


@pytest.mark.parametrize(
    "body",
    [
        {"data": {"text": SECRET}},  # the reply path finds nothing
        {"message": {"text": SECRET}},  # an object where text is wanted
        {"message": "ok", "state": SECRET},  # a status the map does not know
        {"message": "ok", "fields": SECRET},  # extracted fields that are not an object
        {"message": "ok", "tokens": SECRET},  # a token count that is not one
    ],
)
def test_a_mapped_bot_error_never_repeats_what_it_sent(body):
    http = {
        "request": {"text": "{message}"},
        "response": {
            "reply": "$.message",
            "status": "$.state",
            "extracted": "$.fields",
            "usage": {"prompt_tokens": "$.tokens"},
        },
    }
    with _server(200, json.dumps(body).encode()) as base:
        error = _error(f"{base}/chat", http)
    assert SECRET not in error, error


def test_every_failed_connection_reads_the_same(settings):
    """A closed port, a port that speaks another protocol and a port that stays silent give one
    text: the lab is no port scanner."""
    settings.QALAB_RESPONDER_READ_TIMEOUT = 1
    settings.QALAB_RESPONDER_CONNECT_TIMEOUT = 1

    def listener(banner: bytes | None) -> socket.socket:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()

        def serve() -> None:
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                if banner is not None:
                    conn.sendall(banner)
                    conn.close()

        threading.Thread(target=serve, daemon=True).start()
        return sock

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    ssh = listener(b"SSH-2.0-OpenSSH_9.6\r\n")
    silent = listener(None)
    texts = set()
    for port in (closed_port, ssh.getsockname()[1], silent.getsockname()[1]):
        spec = f"http://127.0.0.1:{port}/chat"
        texts.add(_error(spec).replace(spec, "SPEC"))
    ssh.close()
    silent.close()
    assert len(texts) == 1, texts
    assert "could not connect" in texts.pop()


def _resolving(table: dict[str, list[str]]) -> Any:
    """A resolver that knows the names of `table` (and literal addresses)."""

    def resolve(host: str, port: int) -> list[tuple[Any, ...]]:
        out = []
        for address in table.get(host, [host]):
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
            out.append((family, socket.SOCK_STREAM, 6, "", sockaddr))
        return out

    return resolve
