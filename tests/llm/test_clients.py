"""One SDK client (and connection pool) per endpoint configuration and process (issue 19)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from qalab.llm import NullLedger, get_engine
from qalab.llm.clients import close_shared_clients, shared_client
from qalab.llm.openai_engine import OpenAIEngine
from tests.llm.test_openai_engine import make_engine, run
from tests.llm_server import FakeOpenAI


@pytest.fixture(autouse=True)
def fresh_clients() -> Iterator[None]:
    close_shared_clients()
    yield
    close_shared_clients()


def _from_settings(settings: Any, *, base_url: str, api_key: str = "sk-test") -> OpenAIEngine:
    settings.QALAB_LLM_API_KEY = api_key
    settings.QALAB_LLM_BASE_URL = base_url
    settings.QALAB_LLM_JSON_MODE = "json_object"
    settings.QALAB_LLM_TIMEOUT_SECONDS = 7
    engine = get_engine("openai", ledger=NullLedger())
    assert isinstance(engine, OpenAIEngine)
    return engine


def test_engines_from_the_same_settings_share_one_client(settings: Any) -> None:
    first = _from_settings(settings, base_url="http://127.0.0.1:9/v1")
    second = _from_settings(settings, base_url="http://127.0.0.1:9/v1")
    other_key = _from_settings(settings, base_url="http://127.0.0.1:9/v1", api_key="sk-other")
    other_url = _from_settings(settings, base_url="http://127.0.0.1:10/v1")
    assert second.client is first.client
    assert other_key.client is not first.client
    assert other_url.client is not first.client
    assert other_url.client is not other_key.client
    assert first.client.max_retries == 0  # our retry layer is the only one
    settings.QALAB_LLM_TIMEOUT_SECONDS = 8
    other_timeout = get_engine("openai", ledger=NullLedger())
    assert isinstance(other_timeout, OpenAIEngine)
    assert other_timeout.client is not second.client


def test_one_connection_serves_several_engines_and_survives_close() -> None:
    with FakeOpenAI() as server:
        first, _ = make_engine(server)
        run(first)
        first.close()  # must not close the pool the other engines share
        second, _ = make_engine(server)
        assert second.client is first.client
        run(second)
        run(second, role="judge")
        run(make_engine(server)[0])
        assert len(server.requests) == 4
        assert server.connections == 1  # one TCP connection, kept alive across engines


def test_concurrent_first_use_builds_one_client() -> None:
    barrier = threading.Barrier(8)
    seen: list[object] = []

    def build() -> None:
        barrier.wait()
        seen.append(shared_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=5))

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and len({id(client) for client in seen}) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork only")
def test_a_forked_child_builds_its_own_client() -> None:
    parent = shared_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=5)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a Celery prefork worker must not use the parent's sockets
        try:
            child = shared_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=5)
            again = shared_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=5)
            os.write(write, b"ok" if child is not parent and again is child else b"shared")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert shared_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=5) is parent
