"""An `http(s)://` bot of its own JSON shape, by mapping alone (org.yaml `responder_http`).

`outgoing` turns the lab's `ResponderRequest` into the bot's request (method, query, headers,
body from the template); `mapped_reply` reads the bot's JSON back into a `ResponderReply` with
the response paths. The mapping itself is validated at import (`qalab.domain.ResponderHttp`).
Pure: no Django, no network.

An error names the path or contract field and the kind of value found there, never the value:
what a host the run could not use sent back is not repeated (issue 33), since the text reaches
the report page and its exports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from pydantic import ValidationError

from qalab.domain import ResponderHttp
from qalab.json_mapping import PathMissing, as_text, render, resolve
from runs.simulator.contract import ResponderReply, ResponderRequest

LAB_STATUSES = ("AWAITING_RESPONSE", "COMPLETE")


class MappingError(ValueError):
    """The bot's JSON does not have what the mapping points at; the message says what."""


@dataclass(frozen=True)
class Outgoing:
    method: str
    query: str  # "a=1&b=2", or empty
    headers: dict[str, str]
    body: bytes | None


def mapping_from(data: dict[str, Any] | ResponderHttp | None) -> ResponderHttp | None:
    """The mapping as a model (from a run's config or an org row); None when there is none.
    ValueError when it no longer validates (a run's snapshot is checked at use as well)."""
    if data is None or isinstance(data, ResponderHttp):
        return data
    if not data:
        return None
    try:
        return ResponderHttp.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"responder_http mapping is not valid: {exc}") from exc


def mapping_summary(data: dict[str, Any]) -> str:
    """One line for the report's snapshot: method, then where reply, status and fields are."""
    response = data.get("response") or {}
    parts = [str(data.get("method") or "POST"), f"reply {response.get('reply')}"]
    if response.get("status"):
        pairs = ", ".join(f"{k}→{v}" for k, v in sorted((response.get("status_map") or {}).items()))
        parts.append(f"status {response['status']}" + (f" ({pairs})" if pairs else ""))
    extracted = response.get("extracted")
    if isinstance(extracted, dict):
        parts.append("extracted " + ", ".join(f"{k} {v}" for k, v in extracted.items()))
    elif extracted:
        parts.append(f"extracted {extracted}")
    return " · ".join(parts)


def request_values(mapping: ResponderHttp, request: ResponderRequest) -> dict[str, Any]:
    """What each placeholder stands for in this turn."""
    roles = {
        "customer": mapping.history.roles.customer,
        "assistant": mapping.history.roles.assistant,
    }
    history = [
        render(mapping.history.item, {"role": roles[m.role], "content": m.content})
        for m in request.messages
    ]
    latest = next((m.content for m in reversed(request.messages) if m.role == "customer"), "")
    return {
        "message": latest,
        "history": history,
        "history_before": history[:-1],
        "session_id": request.session_id,
        "organization": request.organization,
        "locale": request.locale,
        "kb": [doc.model_dump() for doc in request.kb],
        "kb_text": "\n\n".join(f"# {doc.title}\n\n{doc.text}" for doc in request.kb),
        "intake_fields": [field.model_dump() for field in request.intake_fields],
        "intake_keys": [field.key for field in request.intake_fields],
    }


def outgoing(mapping: ResponderHttp, request: ResponderRequest) -> Outgoing:
    """The bot's own request for this turn."""
    values = request_values(mapping, request)
    body = None
    if mapping.request is not None:
        body = json.dumps(render(mapping.request, values), ensure_ascii=False).encode()
    return Outgoing(
        method=mapping.method,
        query=urlencode({k: render(v, values) for k, v in mapping.query.items()}),
        headers={k: render(v, values) for k, v in mapping.headers.items()},
        body=body,
    )


def shape(data: Any) -> str:
    """What kind of JSON value `data` is, without any of its content: "an object of 2 keys"."""
    if isinstance(data, dict):
        return f"an object of {len(data)} key{'s' * (len(data) != 1)}"
    if isinstance(data, list):
        return f"a list of {len(data)} item{'s' * (len(data) != 1)}"
    if data is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a text"}.get(
        type(data), type(data).__name__
    )


def contract_errors(exc: ValidationError) -> str:
    """pydantic's errors as `field: problem`, without the values that caused them (its
    `input_value`) nor the keys the bot chose (an `extracted` field name is shown as `[key]`)."""
    known = {"reply", "extracted", "status", "usage", "prompt_tokens", "completion_tokens"}
    parts = []
    for error in exc.errors(include_input=False, include_url=False, include_context=False):
        loc = [str(p) if isinstance(p, int) or p in known else "[key]" for p in error["loc"]]
        parts.append(f"{'.'.join(loc) or 'reply'}: {error['msg']}")
    return "; ".join(parts[:5]) + (f" (and {len(parts) - 5} more)" if len(parts) > 5 else "")


def mapped_reply(mapping: ResponderHttp, data: Any) -> ResponderReply:
    """The bot's JSON read through the response paths. MappingError naming the path and the
    kind of value found (never the value) when the reply is not there (or not text), a status
    the map does not know, or extracted fields that are not an object."""
    paths = mapping.response
    try:
        reply = _at(paths.reply, data, required=True)
    except MappingError as exc:
        raise MappingError(f"{exc}; the bot answered {shape(data)}") from None
    if isinstance(reply, list) and all(isinstance(part, str) for part in reply) and reply:
        reply = "\n".join(reply)
    if not isinstance(reply, str):
        raise MappingError(
            f"reply path {paths.reply} holds {shape(reply)}, not text; the bot answered "
            f"{shape(data)}"
        )
    reply_data: dict[str, Any] = {
        "reply": reply,
        "status": _status(mapping, data),
        "extracted": _extracted(mapping, data),
    }
    if paths.usage is not None:
        reply_data["usage"] = {
            name: _tokens(path, data)
            for name, path in paths.usage.model_dump().items()
            if path is not None
        }
    try:
        return ResponderReply.model_validate(reply_data)
    except ValidationError as exc:
        raise MappingError(
            f"the mapped reply does not fit the contract: {contract_errors(exc)}"
        ) from exc


def _at(path: str, data: Any, *, required: bool = False) -> Any:
    """The value at `path`; None when it is absent or null (MappingError when `required`)."""
    try:
        value = resolve(path, data)
    except PathMissing as exc:
        if required:
            # Where the path stopped (its own steps, the kind and length found), without the
            # keys the bot's object has: those are the bot's, not the mapping's.
            where = str(exc).partition(" (its keys: ")[0]
            raise MappingError(f"reply path {path} found nothing: {where}") from None
        return None
    if value is None and required:
        raise MappingError(f"reply path {path} is null")
    return value


def _status(mapping: ResponderHttp, data: Any) -> str | None:
    paths = mapping.response
    if paths.status is None:
        return None
    raw = _at(paths.status, data)
    if raw is None:
        return None
    key = as_text(raw)
    if key in paths.status_map:
        return paths.status_map[key]
    if key in LAB_STATUSES:
        return key
    known = ", ".join(repr(k) for k in paths.status_map) or "none"
    raise MappingError(
        f"the status at {paths.status} ({shape(raw)}) is neither in status_map (known: "
        f"{known}) nor one of {', '.join(LAB_STATUSES)}"
    )


def _extracted(mapping: ResponderHttp, data: Any) -> dict[str, str]:
    wanted = mapping.response.extracted
    if wanted is None:
        return {}
    if isinstance(wanted, dict):
        found = {key: _at(path, data) for key, path in wanted.items()}
    else:
        found = _at(wanted, data)
        if found is None:
            return {}
        if not isinstance(found, dict):
            raise MappingError(
                f"extracted path {wanted} holds {shape(found)}, not an object of fields"
            )
    return {key: as_text(value) for key, value in found.items() if value is not None}


def _tokens(path: str, data: Any) -> int:
    value = _at(path, data)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MappingError(f"usage path {path} holds {shape(value)}, not a token count")
    return value
