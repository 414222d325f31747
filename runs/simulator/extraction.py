"""Intake extraction by rules: what the customer said, mapped onto the org's intake fields.

The responder contract gives each field a key, a label and whether it is required, not a type,
so the kind is read off the key and label (email, phone, date, time, name, service, free text).
Later messages override earlier ones, and a value the customer takes back ("not 2026-12-09,
make it 2026-12-02") is dropped in favour of the one they keep.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from runs.simulator.contract import IntakeFieldRef

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"(?<![\w-])\+?\d[\d ()-]{6,}\d(?![\w-])")
DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)
TIME = re.compile(r"\b(?:[01]?\d|2[0-3])[:.][0-5]\d\b|\b(?:1[0-2]|0?[1-9]) ?(?:am|pm)\b", re.I)
NAME = re.compile(
    r"\b(?i:my name is|my name's|name is|i am|i'm|im|this is|it's|its)\s+"
    r"([A-Z][\w'’-]+(?:\s+(?:[A-Z]|O['’]|Mc|Mac)[\w'’-]+){0,3})"
)
_TAKEN_BACK = re.compile(r"\bnot\s+$", re.IGNORECASE)
# Words that follow "I am" without being a name.
_NOT_NAMES = frozenset(
    [
        "the",
        "a",
        "an",
        "not",
        "looking",
        "interested",
        "calling",
        "writing",
        "trying",
        "wondering",
        "new",
        "sorry",
        "happy",
        "fine",
        "available",
        "free",
        "unsure",
        "sure",
    ]
)


def field_kind(field: IntakeFieldRef) -> str:
    text = f"{field.key} {field.label}".casefold()
    for kind, hints in (
        ("email", ("email", "e-mail")),
        ("phone", ("phone", "mobile", "telephone", "number")),
        ("date", ("date", "day")),
        ("time", ("time", "slot")),
        ("name", ("name",)),
        ("service", ("service", "treatment", "repair", "product", "appointment type")),
    ):
        if any(h in text for h in hints):
            return kind
    return "text"


def _kept(pattern: re.Pattern[str], text: str) -> str | None:
    """The last match in `text` that the customer did not take back with a preceding "not"."""
    kept = [m.group(0) for m in pattern.finditer(text) if not _TAKEN_BACK.search(text[: m.start()])]
    return kept[-1].strip() if kept else None


def _name(text: str) -> str | None:
    for match in NAME.finditer(text):
        value = match.group(1).strip()
        if value.split()[0].casefold() not in _NOT_NAMES:
            return value
    return None


def _labelled(field: IntakeFieldRef, text: str) -> str | None:
    """`Label: value` or `label is value`, the way forms and careful customers write it."""
    for name in (field.label, field.key.replace("_", " ")):
        label = re.escape(name.strip().casefold())
        match = re.search(rf"{label}\s*(?::|-|\bis\b)\s*([^.\n]+)", text, re.IGNORECASE)
        if match:
            return match.group(1).strip()
    return None


def _service(text: str, services: Iterable[str]) -> str | None:
    lowered = text.casefold()
    found = [s for s in services if s.casefold() in lowered]
    return max(found, key=len) if found else None


def extract_fields(
    fields: list[IntakeFieldRef], customer_messages: list[str], services: Iterable[str]
) -> dict[str, str]:
    """Values for the intake fields found in the customer's messages, newest value winning."""
    services = list(services)
    out: dict[str, str] = {}
    for message in customer_messages:
        for field in fields:
            kind = field_kind(field)
            value = _labelled(field, message) if kind == "text" else None
            if value is None:
                if kind == "email":
                    value = _kept(EMAIL, message)
                elif kind == "phone":
                    value = _kept(PHONE, DATE.sub(" ", EMAIL.sub(" ", message)))
                elif kind == "date":
                    value = _kept(DATE, message)
                elif kind == "time":
                    value = _kept(TIME, DATE.sub(" ", message))
                elif kind == "name":
                    value = _name(message)
                elif kind == "service":
                    value = _service(message, services)
            if value:
                out[field.key] = value
    return out
