"""One OpenAI SDK client per endpoint configuration and process, shared by every engine.

Building an `openai.OpenAI` builds an HTTP connection pool; a new one per engine meant a new
TCP (and TLS) handshake for the first call of every stage and case. Engines built with the same
(base URL, API key, timeout) in one process now share one client, and with it its pool of
kept-alive connections. The client is thread-safe; the cache is guarded by a lock.

A forked child (a Celery prefork worker) must never reuse its parent's sockets: the cache is
keyed by the process id and emptied in the child after a fork.

The SDK's own retries stay off (`max_retries=0`): the engine's retry layer meters every attempt.
"""

from __future__ import annotations

import os
import threading

import openai

ClientKey = tuple[int, str | None, str, float]

_lock = threading.Lock()
_clients: dict[ClientKey, openai.OpenAI] = {}


def shared_client(*, base_url: str | None, api_key: str, timeout: float) -> openai.OpenAI:
    """The process's one SDK client for this endpoint, key and timeout (built on first use)."""
    key: ClientKey = (os.getpid(), base_url or None, api_key, float(timeout))
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = new_client(base_url=base_url, api_key=api_key, timeout=timeout)
        return client


def new_client(*, base_url: str | None, api_key: str, timeout: float) -> openai.OpenAI:
    """A fresh SDK client with its own connection pool and no SDK retries."""
    return openai.OpenAI(
        api_key=api_key,
        base_url=base_url or None,
        max_retries=0,
        timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)),
    )


def close_shared_clients() -> int:
    """Close and forget every shared client of this process (tests, shutdown); how many."""
    with _lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        client.close()
    return len(clients)


def _forget_after_fork() -> None:
    """In a forked child: drop the parent's clients unclosed (their sockets are the parent's)
    and take a fresh lock (the parent's may have been held by another thread at fork time)."""
    global _lock
    _lock = threading.Lock()
    _clients.clear()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_after_fork)
