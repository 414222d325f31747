"""A small, real OpenAI-compatible HTTP server for tests (no network beyond 127.0.0.1).

    with FakeOpenAI(rate_429=0.2, seed=7) as server:
        engine = OpenAIEngine(..., base_url=server.base_url, api_key="test")
        ...
        assert server.usage_total == ledger.used

It answers `POST /v1/chat/completions` with a JSON instance generated from the request's schema
(`response_format.json_schema.schema`, or `response_format.schema` for llama.cpp-style
`json_object` requests, or `{}` without one) and `GET /v1/models`. Faults are drawn per request
from a seeded `random.Random` over the rates, or forced in order with `fault_script`.
`profile=` sets the quirks of a real server family together (`tests.llm_profiles`: `openai`,
`llamacpp`, `vllm`, `ollama`).
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.llm_profiles import (
    LLAMACPP_JSON_SCHEMA_500,
    context_error,
    follow_instructions,
    get_profile,
    is_json_object_request,
    prompt_key,
    seen_messages,
    with_raw_newlines,
)

# Fault names, also the values accepted by `fault_script`.
FAULTS = ("ok", "429", "quota_429", "500", "timeout", "invalid_json", "length")
_RATE_OPTIONS = (
    ("quota_429", "quota_429"),
    ("429", "rate_429"),
    ("500", "rate_500"),
    ("timeout", "rate_timeout"),
    ("invalid_json", "rate_invalid_json"),
    ("length", "rate_length"),
)
_WORDS = (
    "alpha",
    "bravo",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "grove",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lumen",
    "meadow",
    "nectar",
    "orchid",
    "pebble",
)
INVALID_JSON_CONTENT = "Sure! here you go"

Brain = Callable[[dict[str, Any]], "str | dict[str, Any] | None"]


class SchemaInstance:
    """Builds one JSON instance for a JSON schema (the subset pydantic emits)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.counter = 0

    def word(self) -> str:
        word = _WORDS[self.counter % len(_WORDS)]
        self.counter += 1
        return word

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            if not ref.startswith("#/"):
                return {}
            node: Any = self.root
            for part in ref[2:].split("/"):
                node = node.get(part, {}) if isinstance(node, dict) else {}
            extra = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**node, **extra}
            seen += 1
        return schema

    def build(self, schema: Any, depth: int = 0) -> Any:
        if not isinstance(schema, dict) or depth > 12:
            return None
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = [b for b in schema[key] if self.resolve(b).get("type") != "null"]
                return self.build(branches[0] if branches else {"type": "null"}, depth + 1)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for branch in schema["allOf"]:
                merged.update(self.resolve(branch))
            return self.build(merged, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string" if schema else "object"
        if kind == "object":
            return self.build_object(schema, depth)
        if kind == "array":
            count = max(int(schema.get("minItems", 1)), 1)
            if "maxItems" in schema:
                count = min(count, int(schema["maxItems"]))
            return [self.build(schema.get("items", {}), depth + 1) for _ in range(count)]
        if kind == "string":
            return self.build_string(schema)
        if kind in ("integer", "number"):
            return self.build_number(schema, integer=kind == "integer")
        if kind == "boolean":
            return True
        return None

    def build_object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties", {})
        required = [name for name in schema.get("required", []) if name in properties]
        order = required + [name for name in properties if name not in required]
        return {name: self.build(properties[name], depth + 1) for name in order}

    def build_string(self, schema: dict[str, Any]) -> str:
        fmt = schema.get("format")
        if fmt == "date":
            value = "2030-01-15"
        elif fmt == "time":
            value = "10:30:00"
        elif fmt == "date-time":
            value = "2030-01-15T10:30:00Z"
        elif fmt == "email":
            value = "alex@example.com"
        else:
            value = self.word()
            while len(value) < int(schema.get("minLength", 0)):
                value = f"{value} {self.word()}"
        if "maxLength" in schema:
            value = value[: int(schema["maxLength"])]
        return value

    @staticmethod
    def build_number(schema: dict[str, Any], *, integer: bool) -> int | float:
        low = schema.get("minimum")
        if low is None and "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"] + 1
        high = schema.get("maximum")
        if high is None and "exclusiveMaximum" in schema:
            high = schema["exclusiveMaximum"] - 1
        value: float = 1 if low is None else low
        if high is not None:
            value = min(value, high)
        return math.ceil(value) if integer else float(value)


def instance_for(schema: dict[str, Any] | None) -> Any:
    """A JSON instance that validates against `schema` (`{}` without a schema)."""
    if not schema:
        return {}
    return SchemaInstance(schema).build(schema)


def request_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    return fmt.get("schema")


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


class FakeOpenAI:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 in a daemon thread.

    Options: `seed`, `latency` (seconds added to every reply), fault rates `rate_429`,
    `quota_429`, `rate_500`, `rate_timeout` (sleeps `timeout_sleep` seconds before answering),
    `rate_invalid_json`, `rate_length`; `reject_json_schema` (`json_schema_status`, 400 by default,
    for `json_schema` requests);
    `fault_script` (faults of the first requests, in order, from FAULTS); `brain(body)` returning
    custom content (None -> the schema-driven generator); `report_usage` (False omits usage);
    `profile` (`tests.llm_profiles.PROFILES`; `reject_json_schema` and `json_schema_status`
    given explicitly win over the profile's); `context_length` (vLLM's limit, for `vllm`).
    The schema-driven replies follow `set the field "x" to "y"` instructions the model sees.
    Observed: `requests` (as sent), `seen_prompts` (the messages the model saw after the chat
    template), `dropped_system` (system messages a template dropped), `replies` (contents).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        latency: float = 0.0,
        rate_429: float = 0.0,
        quota_429: float = 0.0,
        rate_500: float = 0.0,
        rate_timeout: float = 0.0,
        timeout_sleep: float = 2.0,
        rate_invalid_json: float = 0.0,
        rate_length: float = 0.0,
        reject_json_schema: bool | None = None,
        json_schema_status: int | None = None,
        fault_script: list[str] | None = None,
        brain: Brain | None = None,
        report_usage: bool = True,
        profile: str = "openai",
        context_length: int | None = None,
    ) -> None:
        unknown = [f for f in fault_script or [] if f not in FAULTS]
        if unknown:
            raise ValueError(f"unknown faults {unknown}; use {FAULTS}")
        self.latency = latency
        self.rates = {
            "quota_429": quota_429,
            "429": rate_429,
            "500": rate_500,
            "timeout": rate_timeout,
            "invalid_json": rate_invalid_json,
            "length": rate_length,
        }
        self.timeout_sleep = timeout_sleep
        self.profile = get_profile(profile)
        if context_length is not None:
            self.profile = replace(self.profile, context_length=context_length)
        self.reject_json_schema = (
            self.profile.reject_json_schema if reject_json_schema is None else reject_json_schema
        )
        self.json_schema_status = (
            self.profile.json_schema_status if json_schema_status is None else json_schema_status
        )
        self.fault_script = list(fault_script or [])
        self.brain = brain
        self.report_usage = report_usage
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._peers: list[tuple[str, int]] = []
        self.fault_counts: Counter[str] = Counter()
        self.usage_total = 0
        self.max_in_flight = 0  # the most requests being answered at once
        self._in_flight = 0
        self.spans: list[tuple[str, float, float]] = []  # (model, start, end) of each answer
        self.seen_prompts: list[list[dict[str, Any]]] = []
        self.dropped_system = 0
        self.replies: list[str] = []
        self._evaluated: set[str] = set()  # prompts an Ollama-style cache has evaluated
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ observations
    @property
    def requests(self) -> list[dict[str, Any]]:
        """JSON bodies of every chat-completions request received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._lock:
            return list(self._headers)

    def most_at_once(self, model: str | None = None) -> int:
        """The most requests (of `model`, or of any) that were being answered at one moment."""
        with self._lock:
            spans = [(a, b) for m, a, b in self.spans if model is None or m == model]
        events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
        most = now = 0
        for _, step in events:
            now += step
            most = max(most, now)
        return most

    @property
    def connections(self) -> int:
        """How many distinct TCP connections (client address and port) the requests came on."""
        with self._lock:
            return len(set(self._peers))

    # ------------------------------------------------------------------ behaviour
    def _record(
        self, body: dict[str, Any], headers: dict[str, str], peer: tuple[str, int] = ("", 0)
    ) -> None:
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            self._peers.append(peer)

    def _choose_fault(self, body: dict[str, Any]) -> str:
        fmt = body.get("response_format")
        with self._lock:
            if (
                self.reject_json_schema
                and isinstance(fmt, dict)
                and fmt.get("type") == "json_schema"
            ):
                fault = "reject_json_schema"
            elif self.fault_script:
                fault = self.fault_script.pop(0)
            else:
                draw = self._rng.random()
                fault = "ok"
                edge = 0.0
                for name, rate in self.rates.items():
                    edge += rate
                    if draw < edge:
                        fault = name
                        break
            self.fault_counts[fault] += 1
        return fault

    def content_for(self, body: dict[str, Any]) -> str:
        if self.brain is not None:
            custom = self.brain(body)
            if isinstance(custom, str):
                return custom
            if custom is not None:
                return json.dumps(custom)
        instance = instance_for(request_schema(body))
        return json.dumps(follow_instructions(instance, body.get("messages", [])))

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        prompt_chars = 0
        for message in messages:
            value = message.get("content")
            if isinstance(value, str):
                prompt_chars += len(value)
            elif isinstance(value, list):  # content parts
                prompt_chars += sum(len(str(p.get("text", ""))) for p in value)
        return _tokens(prompt_chars)

    def context_error(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The profile's refusal of a request over its context length (vLLM), or None."""
        seen = seen_messages(self.profile, body.get("messages", []))
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        return context_error(self.profile, self.prompt_tokens(seen), max_tokens)

    def completion(self, body: dict[str, Any], fault: str) -> dict[str, Any]:
        sent = body.get("messages", [])
        seen = seen_messages(self.profile, sent)  # after the server's chat template
        content = self.content_for({**body, "messages": seen})
        if self.profile.raw_newlines and is_json_object_request(body):
            content = with_raw_newlines(content)
        finish_reason = "stop"
        if fault == "invalid_json":
            content = INVALID_JSON_CONTENT
        elif fault == "length":
            content = content[: len(content) // 2]
            finish_reason = "length"
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        completion_tokens = _tokens(len(content))
        if max_tokens:
            completion_tokens = min(completion_tokens, int(max_tokens))
        prompt_tokens = self.prompt_tokens(seen)
        with self._lock:
            self.seen_prompts.append(seen)
            self.dropped_system += len(sent) - len(seen)
            self.replies.append(content)
            if self.profile.cached_prompt_is_free:
                key = prompt_key(body, seen)
                if key in self._evaluated:  # Ollama: "0 for completions where prompt
                    prompt_tokens = 0  # evaluation is cached" (docs/openai.md, Notes)
                self._evaluated.add(key)
        with self._lock:
            number = len(self._requests)
        reply: dict[str, Any] = {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
        }
        if self.report_usage:
            total = prompt_tokens + completion_tokens
            reply["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": total,
            }
            if fault != "timeout":  # the client gave up: it never sees this usage
                with self._lock:
                    self.usage_total += total
        return reply


def _error(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without TCP_NODELAY the body of a reply on a
    # kept-alive connection waits ~40 ms for the client's delayed ACK (real servers set it).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", f"req_fake_{id(payload)}")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/v1/models"):
            models = [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]
            self._send(200, {"object": "list", "data": models})
        else:
            self._send(404, _error(f"no route {self.path}", "invalid_request_error", None))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/v1/chat/completions"):
            self._send(404, _error(f"no route {self.path}", "invalid_request_error", None))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, _error("the body is not JSON", "invalid_request_error", None))
            return
        fake = self.fake
        peer = (str(self.client_address[0]), int(self.client_address[1]))
        fake._record(body, {k.lower(): v for k, v in self.headers.items()}, peer)
        fault = fake._choose_fault(body)
        with fake._lock:
            fake._in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake._in_flight)
        start = time.monotonic()
        try:
            self._answer(fake, body, fault)
        finally:
            with fake._lock:
                fake._in_flight -= 1
                fake.spans.append((str(body.get("model", "")), start, time.monotonic()))

    def _answer(self, fake: FakeOpenAI, body: dict[str, Any], fault: str) -> None:
        if fake.latency:
            fake._stopping.wait(fake.latency)
        if fault == "reject_json_schema":
            message = (
                "Invalid parameter: 'response_format' of type 'json_schema' is not supported "
                "with this model."
            )
            kind = "invalid_request_error"
            if fake.json_schema_status >= 500:  # llama.cpp's server: a 500 with its own text
                message, kind = LLAMACPP_JSON_SCHEMA_500, "internal_server_error"
            self._send(fake.json_schema_status, _error(message, kind, None))
        elif (refusal := fake.context_error(body)) is not None:
            self._send(400, refusal)  # vLLM: over the context length, a flat error body
        elif fault == "429":
            self._send(
                429,
                _error("Rate limit reached, try again in 1s.", "requests", "rate_limit_exceeded"),
                {"Retry-After": "1"},
            )
        elif fault == "quota_429":
            message = "You exceeded your current quota, please check your plan and billing."
            self._send(429, _error(message, "insufficient_quota", "insufficient_quota"))
        elif fault == "500":
            self._send(500, _error("The server had an error.", "server_error", None))
        else:
            if fault == "timeout":
                fake._stopping.wait(fake.timeout_sleep)
            self._send(200, fake.completion(body, fault))
