"""Server profiles for `tests.llm_server.FakeOpenAI`: the quirks of one real OpenAI-compatible
server family, set together by `FakeOpenAI(profile=...)`. Only documented behaviour is modelled;
each quirk names where it is written down.

- `openai`: the reference behaviour, no quirks.
- `llamacpp` (llama.cpp's `llama-server`, also `llama-cpp-python[server]`), as met in issue 20:
  HTTP 500 (not 400) to `response_format: json_schema`; its JSON grammar lets raw newlines into
  strings, so `json_object` replies carry them unescaped; the chat template of some models drops
  system messages, so the model never sees them (nor are they counted in `prompt_tokens`).
- `vllm`: takes `json_schema` (guided decoding) and `json_object`
  (docs.vllm.ai/en/latest/serving/openai_compatible_server.html: all OpenAI chat parameters
  but tools). A request whose prompt plus `max_tokens` exceeds the model's context
  (`--max-model-len`) is refused with HTTP 400 and a flat error body:
  `{"object": "error", "message": "This model's maximum context length is N tokens. However,
  you requested T tokens (P in the messages, C in the completion). Please reduce the length of
  the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}`
  (vllm-project/vllm#20409; llamastack/llama-stack discussion #981).
- `ollama`: takes `response_format` (github.com/ollama/ollama docs/openai.md, "Supported
  request fields"); its one documented usage note: "`usage.prompt_tokens` will be 0 for
  completions where prompt evaluation is cached" (same page, "Notes"), modelled as a prompt
  the server has already evaluated (the same model and messages as an earlier request).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# llama-cpp-python's server's answer to `response_format: json_schema`, as received from
# llama-cpp-python 0.3.36 (tests/realserver): HTTP 500, type `internal_server_error`, and this
# multi-line message, a pydantic validation error and a traceback (path shortened).
LLAMACPP_JSON_SCHEMA_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File "
    '"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in '
    "create_chat_completion\n    POST /v1/chat/completions"
)

# vLLM's context limit when the profile is asked for without one (a Llama 3 8B's 8192).
VLLM_CONTEXT_LENGTH = 8192


@dataclass(frozen=True)
class Profile:
    name: str
    reject_json_schema: bool = False
    json_schema_status: int = 400
    drops_system: bool = False  # the chat template drops system messages (llama.cpp)
    raw_newlines: bool = False  # json_object replies carry raw newlines in strings (llama.cpp)
    context_length: int | None = None  # prompt + max_tokens above it: HTTP 400 (vLLM)
    cached_prompt_is_free: bool = False  # usage.prompt_tokens 0 for a cached prompt (Ollama)


PROFILES: dict[str, Profile] = {
    "openai": Profile("openai"),
    "llamacpp": Profile(
        "llamacpp",
        reject_json_schema=True,
        json_schema_status=500,
        drops_system=True,
        raw_newlines=True,
    ),
    "vllm": Profile("vllm", context_length=VLLM_CONTEXT_LENGTH),
    "ollama": Profile("ollama", cached_prompt_is_free=True),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown server profile {name!r}; use {sorted(PROFILES)}") from None


def seen_messages(profile: Profile, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages the model sees after the server's chat template."""
    if profile.drops_system:
        return [m for m in messages if m.get("role") != "system"]
    return list(messages)


# An escaped newline or tab inside a JSON string: `\n` preceded by an even number of
# backslashes (`\\n` is a backslash and an `n`, not a newline).
_ESCAPED_CONTROL = re.compile(r"(?<!\\)((?:\\\\)*)\\([nt])")


def with_raw_newlines(text: str) -> str:
    """`text` (JSON) with its escaped newlines and tabs written raw, as a llama.cpp grammar
    lets a model write them: invalid for `json.loads` (strict), fine with `strict=False`."""
    return _ESCAPED_CONTROL.sub(lambda m: m.group(1) + ("\n" if m.group(2) == "n" else "\t"), text)


def is_json_object_request(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format")
    return isinstance(fmt, dict) and fmt.get("type") == "json_object"


def context_error(profile: Profile, prompt_tokens: int, max_tokens: int) -> dict[str, Any] | None:
    """vLLM's 400 body for a request over the context length, or None when it fits."""
    limit = profile.context_length
    if limit is None or prompt_tokens + max_tokens <= limit:
        return None
    message = (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, {max_tokens} "
        "in the completion). Please reduce the length of the messages or completion."
    )
    return {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def prompt_key(body: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """What Ollama's prompt cache is keyed on here: the model and the messages it sees."""
    return json.dumps([body.get("model"), messages], sort_keys=True)


# Instructions the schema-driven replies follow, when the model sees them (a model does what
# its prompt says): `set the field "word" to "heliotrope"`. The lab's system-role probe sends one
# in a system message; a template that drops it leaves the model without it.
_SET_FIELD = re.compile(r'set the field "(?P<field>[^"]+)" to "(?P<value>[^"]*)"', re.IGNORECASE)


def follow_instructions(instance: Any, messages: list[dict[str, Any]]) -> Any:
    if not isinstance(instance, dict):
        return instance
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            for match in _SET_FIELD.finditer(content):
                instance[match.group("field")] = match.group("value")
    return instance
