"""Structured output: the JSON modes a server may offer, and reading a model's reply as one
validated pydantic object (or saying what is wrong with it, for the repair turn)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from qalab.llm.base import M, Message, Role

JsonMode = Literal["json_schema", "json_object", "text"]
JSON_MODES: tuple[str, ...] = get_args(JsonMode)
MAX_ERROR_TEXT = 2000
SCHEMA_INSTRUCTION = "Reply with one JSON object that validates against this JSON schema: "
REPAIR_INSTRUCTION = (
    "Your previous reply is not valid: {errors}\n"
    "Reply with only the corrected JSON object: no prose, no code fences."
)


def schema_name(role: Role, output: type[BaseModel]) -> str:
    """`<role>_<Model>`, limited to what OpenAI accepts as a schema name ([A-Za-z0-9_-]{1,64})."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{role}_{output.__name__}")[:64]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _loads(text: str) -> Any:
    """JSON as real servers write it: raw newlines or tabs inside strings are accepted (a
    llama.cpp grammar lets them through; `strict=False`)."""
    return json.loads(text, strict=False)


_FENCE = re.compile(r"^\s*```[\w-]*[ \t]*\n(?P<body>.*?)\n?[ \t]*```\s*$", re.DOTALL)
# Past this many `{`, a reply is not searched further for an object (a model's runaway output).
_MAX_CANDIDATES = 200


def json_objects(text: str) -> list[Any]:
    """Every balanced `{...}` of `text` that parses, largest first: the outermost object comes
    before the objects nested in it, so a wrapper is tried before its parts."""
    found: list[tuple[int, Any]] = []
    start = text.find("{")
    while start != -1 and len(found) < _MAX_CANDIDATES:
        end = _balanced_end(text, start)
        if end is not None:
            with contextlib.suppress(ValueError):
                found.append((end - start, _loads(text[start:end])))
        start = text.find("{", start + 1)
    return [obj for _, obj in sorted(found, key=lambda item: -item[0])]


def extract_json_object(text: str) -> Any:
    """The outermost balanced `{...}` in `text` that parses; ValueError when there is none."""
    objects = json_objects(text)
    if not objects:
        raise ValueError("the reply contains no JSON object")
    return objects[0]


def _balanced_end(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def truncate(text: str, limit: int = MAX_ERROR_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_validation_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(p) for p in error.get("loc", ())) or "(root)"
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    return truncate("; ".join(parts))


def _validated(
    obj: Any, output: type[M], check: Callable[[M], None] | None
) -> tuple[M | None, str]:
    try:
        result = output.model_validate(obj)
    except ValidationError as exc:
        return None, f"the JSON does not match the schema: {format_validation_errors(exc)}"
    if check is not None:
        try:
            check(result)
        except ValueError as exc:
            return None, truncate(f"the JSON does not fit the task: {exc}")
    return result, ""


def validate_reply(
    raw: str, output: type[M], check: Callable[[M], None] | None = None
) -> tuple[M | None, str]:
    """(result, "") for a valid reply, else (None, what is wrong with it, as the repair turn
    quotes it). Lenient where real servers differ, strict where it matters: raw control
    characters in strings and a code fence around the JSON are accepted; in a reply with text
    around its JSON, the outermost object that validates wins (never a nested part of it when
    the whole does), and when none does, the error is the outermost object's."""
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body")
    try:
        obj = _loads(text)
    except json.JSONDecodeError as exc:
        parse_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    else:
        return _validated(obj, output, check)
    first_error = ""
    for candidate in json_objects(text):
        result, error = _validated(candidate, output, check)
        if result is not None:
            return result, ""
        first_error = first_error or error
    if first_error:
        return None, first_error
    return None, truncate(f"the reply is not JSON ({parse_error})")


SystemRole = Literal["system", "user", "merge"]
SYSTEM_ROLES: tuple[str, ...] = get_args(SystemRole)


def adapt_system_role(messages: list[Message], system_role: SystemRole) -> list[Message]:
    """The messages in the form the server's chat template takes: `system` as they are; `user`
    with each system message sent as a user message; `merge` with the system text put at the
    head of the first user message (templates that drop system messages, or that insist on
    user/assistant turns alternating)."""
    if system_role == "system" or not any(m.get("role") == "system" for m in messages):
        return messages
    if system_role == "user":
        return [{**m, "role": "user"} if m.get("role") == "system" else m for m in messages]
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    for message in rest:
        if message.get("role") == "user":
            message["content"] = f"{system}\n\n{message.get('content') or ''}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def prepare_messages(
    messages: list[Message], schema_text: str, json_mode: JsonMode
) -> list[Message]:
    """The messages as sent: with the schema in the system message unless json_schema."""
    prepared = [dict(m) for m in messages]
    if json_mode == "json_schema":
        return prepared
    instruction = SCHEMA_INSTRUCTION + schema_text
    if prepared and prepared[0].get("role") == "system":
        content = prepared[0].get("content") or ""
        prepared[0]["content"] = f"{content}\n\n{instruction}" if content else instruction
    else:
        prepared.insert(0, {"role": "system", "content": instruction})
    return prepared


def request_options(
    *, schema: dict[str, Any], schema_name: str, json_mode: JsonMode
) -> dict[str, Any]:
    """The response-format part of a request for `json_mode`."""
    if json_mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": False},
            }
        }
    if json_mode == "json_object":
        # The typed param knows no `schema` key; llama.cpp-style servers enforce it.
        return {"extra_body": {"response_format": {"type": "json_object", "schema": schema}}}
    return {}
