"""Record & replay for the openai engine: each reply an endpoint gave, kept as one JSON file
named by a hash of its request, so a replayed run takes the recorded path and spends nothing."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qalab.llm.base import Message, Role, Usage
from qalab.llm.prompts import untagged
from qalab.llm.structured import JsonMode, canonical_json

# The engine's logger: an unreadable replay file is reported beside the engine's own messages.
logger = logging.getLogger("qalab.llm.openai")


@dataclass(frozen=True)
class Reply:
    """What the endpoint answered to one request: its text and why it stopped."""

    content: str
    finish_reason: str
    # What the server billed for it; None when it reported nothing, or for a replayed reply.
    usage: Usage | None = None


def replay_key(
    *,
    model: str,
    messages: list[Message],
    schema: dict[str, Any],
    max_tokens: int,
    json_mode: JsonMode,
    variant: str = "",
) -> str:
    """The request's identity: a hash of everything that shapes the reply (fence lines without
    their random per-call tags), and `variant` when set (a later trial's own recording)."""
    payload = {
        "model": model,
        "messages": [
            {**m, "content": untagged(m["content"])} if isinstance(m.get("content"), str) else m
            for m in messages
        ],
        "schema": schema,
        "max_tokens": max_tokens,
        "json_mode": json_mode,
    }
    if variant:  # absent otherwise: the recordings made before variants keep their keys
        payload["variant"] = variant
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def _replay_path(replay_dir: Path | None, key: str) -> Path | None:
    return replay_dir / f"{key}.json" if replay_dir else None


def load_reply(replay_dir: Path | None, key: str) -> Reply | None:
    """The reply recorded for `key`; None without a replay directory, a record or a readable
    one."""
    path = _replay_path(replay_dir, key)
    if path is None or not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        reply = Reply(content=str(record["raw"]), finish_reason=str(record["finish_reason"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("ignoring unreadable replay file %s: %s", path, exc)
        return None
    return reply


def store_reply(replay_dir: Path | None, key: str, *, model: str, role: Role, reply: Reply) -> None:
    """Keep a reply the endpoint gave (valid or not) for replay, written atomically."""
    path = _replay_path(replay_dir, key)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "key": key,
        "model": model,
        "role": role,
        "raw": reply.content,
        "finish_reason": reply.finish_reason,
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, ensure_ascii=False, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
