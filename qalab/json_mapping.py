"""A small, safe language to map the lab's turn onto a bot's own JSON shape and back.

Paths (`$.choices[0].message.content`): `$` is the whole document, then any of `.key`
(letters, digits, `_`, `-`), `[2]` / `[-1]` (list index, negative from the end),
`['any key']` / `["any key"]` (backslash escapes the quote) and `[*]` (every item of a list).
They are parsed by hand: nothing is ever evaluated as code.

Templates are JSON values whose strings may hold placeholders: `"{{message}}"` as a whole
string becomes the value itself (a list stays a list), inside a longer string it is written
as text, and `"{{...history}}"` as an item of a list splices the list in.

Pure: no Django. The org import validates with it (`qalab.domain.ResponderHttp`), the HTTP
responder renders and reads with it (`runs.simulator.http_mapping`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

PATH_MAX = 500
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INDEX = re.compile(r"-?\d+")
PLACEHOLDER = re.compile(r"\{\{\s*(\.\.\.)?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class PathSyntaxError(ValueError):
    """A path that does not parse; the message names the position."""


class PathMissing(LookupError):
    """The document has nothing at the path; the message says where it stopped."""


class _All:
    def __repr__(self) -> str:
        return "[*]"


ALL = _All()
Step = str | int | _All


def parse_path(text: str) -> tuple[Step, ...]:
    """The steps of `text`; PathSyntaxError naming the position of the first mistake."""
    if not isinstance(text, str) or not text.startswith("$"):
        raise PathSyntaxError("a path starts with '$' (the whole reply), e.g. $.reply")
    if len(text) > PATH_MAX:
        raise PathSyntaxError(f"longer than {PATH_MAX} characters")
    steps: list[Step] = []
    pos = 1
    while pos < len(text):
        char = text[pos]
        if char == ".":
            match = _KEY.match(text, pos + 1)
            if not match:
                raise PathSyntaxError(
                    f"expected a key name after '.' at position {pos} "
                    "(quote other keys: ['my key'])"
                )
            steps.append(match.group())
            pos = match.end()
        elif char == "[":
            step, pos = _bracket(text, pos + 1)
            steps.append(step)
        else:
            raise PathSyntaxError(f"unexpected {char!r} at position {pos}: use .key or [...]")
    return tuple(steps)


def _bracket(text: str, pos: int) -> tuple[Step, int]:
    """The step inside `[...]` starting at `pos`, and the position after the `]`."""
    if text.startswith("*]", pos):
        return ALL, pos + 2
    match = _INDEX.match(text, pos)
    if match and text.startswith("]", match.end()):
        return int(match.group()), match.end() + 1
    if pos < len(text) and text[pos] in "'\"":
        quote, out, pos = text[pos], [], pos + 1
        while pos < len(text) and text[pos] != quote:
            if text[pos] == "\\" and pos + 1 < len(text):
                pos += 1
            out.append(text[pos])
            pos += 1
        if not text.startswith(quote + "]", pos):
            raise PathSyntaxError(f"unclosed quoted key at position {pos}")
        return "".join(out), pos + 2
    raise PathSyntaxError(f"expected [number], [*] or ['key'] at position {pos - 1}")


def format_step(step: Step) -> str:
    if isinstance(step, _All):
        return "[*]"
    if isinstance(step, int):
        return f"[{step}]"
    if _KEY.fullmatch(step):
        return f".{step}"
    return "['" + step.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def resolve(path: str, document: Any) -> Any:
    """The value at `path` in `document`; `[*]` gives a list of what each item has there.
    PathMissing saying where the path stopped; PathSyntaxError when it does not parse."""
    return _walk(parse_path(path), document, "$")


def _walk(steps: tuple[Step, ...], value: Any, where: str) -> Any:
    for i, step in enumerate(steps):
        if isinstance(step, _All):
            if not isinstance(value, list):
                raise PathMissing(f"{where} is {_kind(value)}, not a list")
            found = []
            for n, item in enumerate(value):
                try:
                    found.append(_walk(steps[i + 1 :], item, f"{where}[{n}]"))
                except PathMissing:
                    continue
            return found
        if isinstance(step, int):
            if not isinstance(value, list):
                raise PathMissing(f"{where} is {_kind(value)}, not a list")
            if not -len(value) <= step < len(value):
                raise PathMissing(f"{where} has {len(value)} item(s), no [{step}]")
        elif not isinstance(value, dict):
            raise PathMissing(f"{where} is {_kind(value)}, not an object")
        elif step not in value:
            keys = ", ".join(sorted(value)[:8]) or "none"
            raise PathMissing(f"{where} has no key {step!r} (its keys: {keys})")
        value = value[step]
        where += format_step(step)
    return value


# --------------------------------------------------------------------------- templates


def json_problem(value: Any, where: str = "") -> str | None:
    """Why `value` is not plain JSON (a date, a non-string key, NaN...), naming where; None
    when it is."""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where or 'value'}: {value} is not JSON"
    if isinstance(value, list):
        for n, item in enumerate(value):
            if problem := json_problem(item, f"{where}[{n}]"):
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where or 'object'}: key {key!r} is not a string"
            if problem := json_problem(item, f"{where}.{key}" if where else key):
                return problem
        return None
    return f"{where or 'value'}: {type(value).__name__} {value!r} is not JSON"


def template_problem(
    template: Any, *, scalars: frozenset[str], lists: frozenset[str], where: str = ""
) -> str | None:
    """The first misuse of a placeholder in `template` (unknown name, a list inside text, a
    splice outside a list, a placeholder in a key), naming where; None when all is well."""
    here = where or "template"
    if isinstance(template, str):
        for match in PLACEHOLDER.finditer(template):
            spread, name = bool(match.group(1)), match.group(2)
            whole = match.group() == template
            if name not in scalars | lists:
                known = ", ".join(sorted(scalars | lists))
                return f"{here}: unknown placeholder {{{{{name}}}}} (known: {known})"
            if spread:
                return f"{here}: {{{{...{name}}}}} splices a list: use it as an item of a list"
            if name in lists and not whole:
                return (
                    f"{here}: {{{{{name}}}}} is a list: use it as a whole value "
                    f'("{{{{{name}}}}}"), not inside text'
                )
        if "{{" in PLACEHOLDER.sub("", template):
            return f"{here}: '{{{{' without a placeholder name and '}}}}'"
        return None
    if isinstance(template, list):
        for n, item in enumerate(template):
            match = PLACEHOLDER.fullmatch(item) if isinstance(item, str) else None
            if match and match.group(1):
                if match.group(2) not in lists:
                    return f"{here}[{n}]: only a list splices ({', '.join(sorted(lists))})"
                continue
            found = template_problem(item, scalars=scalars, lists=lists, where=f"{here}[{n}]")
            if found:
                return found
        return None
    if isinstance(template, dict):
        for key, item in template.items():
            if "{{" in key:
                return f"{here}: placeholders go in values, not in the key {key!r}"
            inner = f"{where}.{key}" if where else key
            if found := template_problem(item, scalars=scalars, lists=lists, where=inner):
                return found
    return None


def render(template: Any, values: dict[str, Any]) -> Any:
    """`template` with its placeholders filled from `values` (names checked beforehand by
    `template_problem`); strings, numbers and nulls otherwise copied as they are."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole and not whole.group(1):
            return values[whole.group(2)]
        return PLACEHOLDER.sub(lambda m: as_text(values[m.group(2)]), template)
    if isinstance(template, list):
        out: list[Any] = []
        for item in template:
            match = PLACEHOLDER.fullmatch(item) if isinstance(item, str) else None
            if match and match.group(1):
                out.extend(values[match.group(2)])
            else:
                out.append(render(item, values))
        return out
    if isinstance(template, dict):
        return {key: render(item, values) for key, item in template.items()}
    return template


def as_text(value: Any) -> str:
    """A string as it is; any other JSON value as JSON text (`true`, `3`, `null`)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
