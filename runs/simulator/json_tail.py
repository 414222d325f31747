"""The JSON tail convention of prose-writing bots (`openai-chat:`): the reply ends with
`{"status": "AWAITING_RESPONSE"|"COMPLETE", "extracted": {field_key: value}}`, bare or in a
```json fence. Read leniently; a tail that is missing or unreadable leaves status None and
nothing extracted, and never fails the turn."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["AWAITING_RESPONSE", "COMPLETE"]
STATUSES: tuple[Status, ...] = ("AWAITING_RESPONSE", "COMPLETE")
# Only the end of a reply can hold its tail; a bound keeps the scan linear in practice.
TAIL_WINDOW = 4000
_DECODER = json.JSONDecoder(strict=False)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_FENCE_OPEN = re.compile(r"```[ \t]*(?:json)?[ \t]*", re.IGNORECASE)
# The start of a tail the model began but did not finish (cut off at max_tokens, say).
_BROKEN_START = re.compile(r'(?:```[ \t]*(?:json)?\s*)?\{\s*"(?:status|extracted)"', re.IGNORECASE)


@dataclass(frozen=True)
class Tail:
    """A reply split into what the customer reads and what its tail says."""

    reply: str
    status: Status | None = None
    extracted: dict[str, str] = field(default_factory=dict)
    found: bool = False  # a readable tail was there


def split_tail(text: str) -> Tail:
    """`text` without its JSON tail, and the tail's status and extracted fields.

    A fenced (```json ... ```) or bare object at the very end counts when it has a `status` or
    an `extracted` key; JSON is read with strict=False and trailing commas forgiven. A tail
    begun on a line of its own but unreadable is cut from the reply all the same.
    """
    body = text.rstrip()
    window = max(0, len(body) - TAIL_WINDOW)
    if body.endswith("```"):
        opening = body.rfind("```", window, len(body) - 3)
        if opening != -1:
            fence = _FENCE_OPEN.match(body, opening)
            inner = body[fence.end() if fence else opening + 3 : len(body) - 3]
            obj = _loads(inner.strip())
            if _is_tail(obj):
                return _tail(body[:opening], obj)
    if body.endswith("}"):
        start = body.find("{", window)
        while start != -1:
            obj = _loads(body[start:])
            if _is_tail(obj):
                return _tail(body[:start], obj)
            start = body.find("{", start + 1)
    broken = _broken_start(body, window)
    if broken is not None:
        return Tail(reply=body[:broken].rstrip())
    return Tail(reply=body)


def render_tail(reply: str, status: str | None, extracted: dict[str, str]) -> str:
    """`reply` followed by its tail, the way the convention asks a model to write it."""
    tail: dict[str, Any] = {"status": status} if status else {}
    tail["extracted"] = extracted
    return f"{reply}\n\n{json.dumps(tail, ensure_ascii=False)}"


def _loads(candidate: str) -> Any:
    for text in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            obj, end = _DECODER.raw_decode(text)
        except ValueError:
            continue
        if not text[end:].strip():
            return obj
    return None


def _is_tail(obj: Any) -> bool:
    return isinstance(obj, dict) and ("status" in obj or "extracted" in obj)


def _tail(before: str, obj: dict[str, Any]) -> Tail:
    return Tail(
        reply=before.rstrip(),
        status=_status(obj.get("status")),
        extracted=_extracted(obj.get("extracted")),
        found=True,
    )


def _status(value: Any) -> Status | None:
    if not isinstance(value, str):
        return None
    word = re.sub(r"[\s-]+", "_", value.strip()).upper()
    return next((s for s in STATUSES if s == word), None)


def _extracted(value: Any) -> dict[str, str]:
    """Scalar values under non-empty keys, as text; empty, null and nested values left out."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, str] = {}
    for key, item in value.items():
        name = str(key).strip()
        if not name or item is None or isinstance(item, dict | list):
            continue
        text = str(item).lower() if isinstance(item, bool) else str(item).strip()
        if text:
            out[name] = text
    return out


def _broken_start(body: str, window: int) -> int | None:
    """Where an unreadable tail begins: a fence or `{"status"`/`{"extracted"` that opens a
    line of its own near the end and never closes, or None. (A whole object with text after
    it is no tail and stays in the reply.)"""
    found = None
    for match in _BROKEN_START.finditer(body, window):
        line_start = body.rfind("\n", 0, match.start()) + 1
        if body[line_start : match.start()].strip():
            continue
        try:
            _DECODER.raw_decode(body, body.index("{", match.start()))
        except ValueError:
            found = match.start()
    return found
