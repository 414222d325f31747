"""A chatbot under test, reached over HTTP on 127.0.0.1: records requests, misbehaves on demand.

    with ResponderServer(faults={"sc-03": "timeout"}) as bot:
        ... qalab_run --responder bot.url ...
        bot.requests      # every JSON body received, in order
        bot.replies       # what it answered, by session id
        bot.max_in_flight # most requests handled at the same time

With `hold` (case key, turn), the first request for that turn waits, with `holding` set, until
`release` is set: a test acts while the bot is known to be mid-reply.
`reply(body)` makes each normal answer (default: `default_reply`).
With `echo_auth`, every reply quotes the auth header it was sent (a careless bot's debug line).
Faults per case key (the end of the session id): `timeout` (sleeps `sleep` seconds), `garbage`
(a 200 that is not JSON), `500`, `wrong_shape` (JSON without `reply`), `huge` (10 MB),
`drip` (a valid reply, one byte every `sleep` seconds).
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HUGE_BYTES = 10 * 1024 * 1024


def default_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Echo a little of the last message, extract one field, report a status: deterministic."""
    last = body["messages"][-1]["content"]
    turn = sum(m["role"] == "assistant" for m in body["messages"])
    first_key = body["intake_fields"][0]["key"] if body["intake_fields"] else "field"
    return {
        "reply": f"Turn {turn}: noted '{last[:40]}'. Anything else?",
        "extracted": {first_key: f"value-{turn}"},
        "status": "COMPLETE" if turn >= 1 else "AWAITING_RESPONSE",
        "usage": {"prompt_tokens": 10 + turn, "completion_tokens": 5},
    }


# A bot that helps nobody (issue 32): each reply refuses or sends the customer elsewhere.
REFUSALS = (
    "I'm sorry, I can't help with that.",
    "I'm not able to book appointments or answer questions about our services. Please contact "
    "the clinic directly.",
    "Unfortunately that's not something I can help with. Please call reception.",
)


def refuse_everything(body: dict[str, Any]) -> dict[str, Any]:
    """Refuse every message, whatever it asks (the phrasing turns with the turn number)."""
    turn = sum(m["role"] == "assistant" for m in body["messages"])
    return {
        "reply": REFUSALS[turn % len(REFUSALS)],
        "extracted": {},
        "status": "AWAITING_RESPONSE",
        "usage": {"prompt_tokens": 10 + turn, "completion_tokens": 12},
    }


class ResponderServer:
    def __init__(
        self,
        *,
        faults: dict[str, str] | None = None,
        sleep: float = 3.0,
        latency: float = 0.0,
        echo_auth: bool = False,
        hold: tuple[str, int] | None = None,
        reply: Callable[[dict[str, Any]], dict[str, Any]] = default_reply,
    ) -> None:
        self.reply = reply
        self.faults = faults if faults is not None else {}
        self.sleep = sleep
        self.latency = latency
        self.echo_auth = echo_auth
        self.hold = hold
        self.holding = threading.Event()
        self.release = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.replies: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def in_flight(self) -> int:
        """Requests being answered right now."""
        with self._lock:
            return self._in_flight

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/chat"

    def __enter__(self) -> ResponderServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    self._answer(body)
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                case = body["session_id"].rsplit("-", 2)[-2:]
                fault = server.faults.get("-".join(case), "")
                turn = sum(m["role"] == "assistant" for m in body["messages"])
                if server.hold == ("-".join(case), turn) and not server.holding.is_set():
                    server.holding.set()
                    server.release.wait(timeout=120)
                if server.latency:
                    time.sleep(server.latency)
                if fault == "timeout":
                    time.sleep(server.sleep)
                if fault == "500":
                    return self._send(500, b'{"error": "boom"}')
                if fault == "garbage":
                    return self._send(200, b"<html>Service temporarily unavailable</html>")
                if fault == "wrong_shape":
                    return self._send(200, b'{"answer": "I use another contract"}')
                if fault == "huge":
                    return self._send(200, b'{"reply": "' + b"x" * HUGE_BYTES + b'"}')
                reply = server.reply(body)
                if server.echo_auth:
                    reply["reply"] += f" (debug: you sent {self.headers.get('Authorization')})"
                with server._lock:
                    server.replies[body["session_id"]].append(reply)
                if fault == "drip":
                    return self._drip(json.dumps(reply).encode())
                self._send(200, json.dumps(reply).encode())

            def _drip(self, payload: bytes) -> None:
                """A valid reply, one byte every `sleep` seconds: no single read times out."""
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    for i in range(len(payload)):
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                        time.sleep(server.sleep)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout, size cap): that is the point

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()
