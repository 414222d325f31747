"""Chatbots under test that speak their own JSON, not the lab's contract, on 127.0.0.1.

    with ForeignBot("openai") as bot:   # or "rasa"
        ... org.yaml: responder: bot.url, responder_http: {...} ...
        bot.requests   # every JSON body received, in order
        bot.paths      # the path and query of each request
        bot.replies    # what it answered, by session id (its own shape)

`openai`: POST /v1/chat/completions, `{"model", "messages": [{"role": "system"|"user"|
"assistant", "content"}], "user": session}` -> `{"choices": [{"message": {"content"}}],
"usage": {...}, "meta": {"state": "open"|"done", "slots": {...}}}`.
`rasa`: POST /webhooks/rest/webhook, `{"sender": session, "message": text}` -> a list of
messages `[{"recipient_id", "text"}, ..., {"recipient_id", "custom": {"state", "slots"}}]`;
it keeps each sender's history itself.
Faults by the end of the session id (`sc-02`): `no_reply` (a 200 without the reply path).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATHS = {"openai": "/v1/chat/completions", "rasa": "/webhooks/rest/webhook"}


class ForeignBot:
    def __init__(self, shape: str, *, faults: dict[str, str] | None = None) -> None:
        assert shape in PATHS
        self.shape = shape
        self.faults = faults or {}
        self.requests: list[Any] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.replies: dict[str, list[Any]] = defaultdict(list)
        self._turns: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{PATHS[self.shape]}"

    def _fault(self, session: str) -> str:
        return self.faults.get("-".join(session.rsplit("-", 2)[-2:]), "")

    def openai(self, body: dict[str, Any]) -> tuple[str, Any]:
        session = body["user"]
        said = [m for m in body["messages"] if m["role"] != "system"]
        turn = sum(m["role"] == "assistant" for m in said)
        if self._fault(session) == "no_reply":
            return session, {"id": "chatcmpl-x", "choices": [], "meta": {"state": "open"}}
        text = f"Turn {turn}: noted '{said[-1]['content'][:40]}'. Anything else?"
        return session, {
            "id": f"chatcmpl-{turn}",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 20 + turn, "completion_tokens": 7},
            "meta": {"state": "done" if turn >= 1 else "open", "slots": {"name": f"N{turn}"}},
        }

    def rasa(self, body: dict[str, Any]) -> tuple[str, Any]:
        session = body["sender"]
        with self._lock:
            turn = self._turns[session]
            self._turns[session] += 1
        if self._fault(session) == "no_reply":
            return session, [{"recipient_id": session, "custom": {"state": "open"}}]
        return session, [
            {"recipient_id": session, "text": f"Turn {turn}: you said '{body['message'][:40]}'."},
            {"recipient_id": session, "text": "Anything else?"},
            {
                "recipient_id": session,
                "custom": {
                    "state": "done" if turn >= 1 else "open",
                    "slots": {"phone_number": f"+3531555{turn:04d}", "unused": None},
                },
            },
        ]

    def __enter__(self) -> ForeignBot:
        bot = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with bot._lock:
                    bot.requests.append(body)
                    bot.paths.append(self.path)
                    bot.headers.append(dict(self.headers))
                if self.path.split("?")[0] != PATHS[bot.shape]:
                    return self._send(404, {"error": "no such route"})
                session, reply = getattr(bot, bot.shape)(body)
                with bot._lock:
                    bot.replies[session].append(reply)
                self._send(200, reply)

            def _send(self, status: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()
