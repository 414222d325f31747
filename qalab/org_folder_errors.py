"""How an org folder's failures read: one line each, naming the file, the field as the folder
writes it (`services[2].duration`), the value as written (cut short, credentials never shown)
and an example of what is expected:

    org/org.yaml: hours[1].closes: '25:00' is not a time; write e.g. '17:30' or '5:30pm'
    org/org.yaml: services[2].duration: 1.5 — not whole minutes: write minutes, e.g. '90' or '1h30'
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from qalab.redact import redact
from qalab.values.hours import HOURS_EXAMPLE, TIME_EXAMPLE

MAX_PROBLEMS = 50
"""Lines one report shows; the rest are counted."""

# An example of the shape each field expects, by its path with the list indexes left out.
EXAMPLES = {
    "slug": "write e.g. 'harbour-lane'",
    "name": "write e.g. 'Harbour Lane Dental'",
    "locale": "write e.g. 'en_GB'",
    "currency": "write e.g. 'EUR', 'GBP' or '£'",
    "offering": "write e.g. 'A family dental practice in Dublin.'",
    "services": "write e.g. '- {name: Check-up, price: £52, duration: 30 min}'",
    "services[].name": "write e.g. 'Check-up'",
    "services[].price": "write e.g. '£52', 'from €80' or '80-120 €'",
    "services[].duration": "write minutes, e.g. '90' or '1h30'",
    "services[].description": "write e.g. 'Examination and scale and polish.'",
    "intake_fields": "write e.g. '- {key: phone, label: Phone number, kind: phone}'",
    "intake_fields[].key": "write e.g. 'phone'",
    "intake_fields[].label": "write e.g. 'Phone number'",
    "intake_fields[].required": "write true or false",
    "policies[].id": "write e.g. 'cancellation'",
    "policies[].text": "write e.g. 'Cancel 24 hours ahead or pay 30 EUR.'",
    "policies[].critical": "write true or false",
    "skills[].name": "write e.g. 'booking'",
    "skills[].instructions": "write e.g. 'Ask for the name and phone number first.'",
    "hours": HOURS_EXAMPLE,
    "hours[]": "write e.g. '- {days: Mon-Fri, opens: 9am, closes: 5:30pm}' or 'Mon-Fri 9-5'",
    "hours[].days": "write e.g. 'Mon-Fri'",
    "hours[].opens": "write e.g. '09:00' or '9am'",
    "hours[].closes": TIME_EXAMPLE,
    "contact": "write e.g. '{phone: +353 1 555 0142, email: hello@example.ie}'",
    "responder": "write e.g. 'reference' or 'https://bot.example.com/chat'",
}


@dataclass(frozen=True)
class Problem:
    """One failure of a folder: the file at fault and what is wrong there."""

    file: str
    text: str

    def __str__(self) -> str:
        return f"{self.file}: {self.text}"


def field_path(loc: tuple[Any, ...]) -> str:
    """The field as the folder writes it: ('services', 2, 'price') -> 'services[2].price'."""
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return path or "(top level)"


def _pattern(loc: tuple[Any, ...]) -> str:
    return "".join("[]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _secret_place(loc: tuple[Any, ...]) -> bool:
    """Where a value may be a credential the folder must not hold, so never shown."""
    return loc[:1] == ("responder_http",) and any(p in ("headers", "query") for p in loc[1:3])


def shown(value: Any) -> str | None:
    """The value quoted for a message, cut to 60 characters, credential shapes redacted; a
    list or mapping by its kind; None when there is nothing to show."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "empty"
    if not isinstance(value, str | int | float | Decimal | bool):
        return None
    text = redact(str(value), secrets=[])
    text = text if len(text) <= 60 else text[:59] + "…"
    return repr(text) if isinstance(value, str) else text


def _message(item: ErrorDetails) -> str:
    """Pydantic's message as the rest of the sentence: 'Value error, must be ...' -> 'must be
    ...', 'Input should be ...' -> 'should be ...'."""
    message = item["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if message.startswith("Input should"):
        message = message.removeprefix("Input ")
    elif message.startswith("String should"):
        message = "should" + message.removeprefix("String should")
    elif message.startswith("List should"):
        message = "should" + message.removeprefix("List should")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    return message


def describe(item: ErrorDetails) -> str:
    """One pydantic failure as '<field>: <value> — <what is wrong>; <example>'."""
    loc = tuple(item["loc"])
    path = field_path(loc)
    example = EXAMPLES.get(_pattern(loc).removesuffix("_text"), "")
    if item["type"] == "missing":
        return f"{path}: missing (required)" + (f"; {example}" if example else "")
    if item["type"] == "extra_forbidden":
        value = shown(item.get("input")) or "a value"
        return f"{path}: {value} — no such field here (a typo, or at the wrong level?)"
    message = _message(item)
    # The whole document is no value to show; a header or query value may be a credential.
    value = None if not loc or _secret_place(loc) else shown(item.get("input"))
    text = message
    if value is not None and value not in message:
        text = f"{value} — {message}"
    if example and "e.g." not in text and item["type"] != "literal_error":
        text = f"{text}; {example}"
    return f"{path}: {text}"


def _kb_problem(item: ErrorDetails, loc: tuple[Any, ...]) -> str:
    if loc == ("slug",):
        value = shown(item.get("input"))
        return (
            f"the file name {value} — use lower-case letters, digits, '-' and '_' only, "
            "e.g. 'opening-hours.md'"
        )
    return describe({**item, "loc": loc})


def _order(data: dict[str, Any]) -> dict[str, int]:
    return {str(key): i for i, key in enumerate(data)}


def validation_problems(
    error: ValidationError, org_file: Path, data: dict[str, Any], kb_files: list[Path]
) -> list[Problem]:
    """Every failure of one validation of the folder, in the order org.yaml writes its fields;
    a KB document's failure names its file."""
    order = _order(data)
    items = sorted(
        error.errors(),
        key=lambda e: (
            order.get(str(e["loc"][0]), len(order)) if e["loc"] else -1,
            e["loc"][1] if len(e["loc"]) > 1 and isinstance(e["loc"][1], int) else -1,
        ),
    )
    problems = []
    for item in items:
        loc = tuple(item["loc"])
        if loc[:1] == ("kb",) and len(loc) > 2 and isinstance(loc[1], int):
            doc = kb_files[loc[1]] if loc[1] < len(kb_files) else org_file.parent / "kb"
            problems.append(Problem(str(doc), _kb_problem(item, loc[2:])))
        else:
            problems.append(Problem(str(org_file), describe(item)))
    return problems


def report(problems: list[Problem]) -> str:
    """The problems, one line each; past `MAX_PROBLEMS`, how many more."""
    lines = [str(p) for p in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        lines.append(f"… and {len(problems) - MAX_PROBLEMS} more")
    return "\n".join(lines)
