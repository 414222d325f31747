"""Intake extraction by rules: what the customer said, mapped onto the org's intake fields.

The responder contract gives each field a key, a label and whether it is required, not a type,
so the kind is read off the key and label (email, phone, date, time, name, service, free text).
Later messages override earlier ones, and a value the customer takes back ("not next Tuesday,
make it Friday the 4th", "actually make that a hygiene clean instead") is dropped in favour of
the one they keep.

Dates and times are read the way people say them (`generator.dates`). A time is recorded as
HH:MM ("half nine" -> 09:30). The request does not say what day it is, so a date is recorded as
the customer anchored it: ISO stays ISO, a named month becomes "4 December", and a relative day
keeps its standard spelling ("next Tuesday", "tomorrow", "Friday the 12th"); whoever knows the
day of the conversation resolves it (the judge does, against the blueprint's reference day).
`extract_spoken` also returns the customer's own words for each value, so a reply can read
them back without stating a figure the customer never wrote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.dates import proposals, time_proposals
from runs.simulator.contract import IntakeFieldRef

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"(?<![\w-])\+?\d[\d ()-]{6,}\d(?![\w-])")
DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)
NAME = re.compile(
    r"\b(?i:my name is|my name's|name is|name\s*:|i am|i'm|im|this is|it's|its)\s*"
    # An initial keeps its dot ("Hans-J. Budig"); a sentence's full stop does not.
    # "van der", "de", "von" between the parts of a name belong to it.
    r"([A-Z][\w'’-]*(?:(?<=\b[A-Z])\.)?(?:\s+(?:(?:van|von|der|den|de|da|di|du|del|le|la|ter|"
    r"ten|zu)\s+){0,2}(?:[A-Z]|O['’]|Mc|Mac)[\w'’-]*(?:(?<=\b[A-Z])\.)?){0,3})"
)
_TAKEN_BACK = re.compile(
    r"\b(?:not|instead of|rather than)\s+(?:(?:the|a|an|on|for|at)\s+)?$", re.IGNORECASE
)
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


# The words a field may use besides `number` when it asks for a phone ("Contact number", "Your
# best number"), and besides `name` when it asks for the customer's own name ("Full name",
# "Owner's name"). Any other word names another number ("Frame number", "Number of guests") or
# someone or something else ("Pet's name and species", "Company name").
def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]+", text.casefold()))


_PHONE_NUMBER_WORDS = _words(
    "number no contact your best callback call home work cell mobile reach you on to at"
)
_OWN_NAME_WORDS = _words(
    "name names full first last surname given family your customer client contact owner "
    "patient guest s and"
)


def _only(text: str, head: str, allowed: frozenset[str]) -> bool | None:
    """None when `text` does not use `head`; else whether every word it uses is `allowed`."""
    found = _words(text)
    return None if head not in found else found <= allowed


def field_kind(field: IntakeFieldRef) -> str:
    text = f"{field.key} {field.label}".casefold()
    if _only(text, "number", _PHONE_NUMBER_WORDS):
        return "phone"
    if _only(text, "name", _OWN_NAME_WORDS) is False:
        return "text"
    for kind, hints in (
        ("email", ("email", "e-mail")),
        ("phone", ("phone", "mobile", "telephone")),
        ("date", ("date", "day")),
        ("time", ("time", "slot")),
        ("name", ("name",)),
        ("service", ("service", "treatment", "repair", "product", "appointment type")),
    ):
        if any(h in text for h in hints):
            return kind
    return "text"


def _taken_back(text: str, start: int) -> bool:
    return bool(_TAKEN_BACK.search(text[:start]))


def _kept(pattern: re.Pattern[str], text: str) -> str | None:
    """The last match in `text` that the customer did not take back with a preceding "not"."""
    kept = [m.group(0) for m in pattern.finditer(text) if not _taken_back(text, m.start())]
    return kept[-1].strip() if kept else None


def _date(text: str) -> tuple[str, str] | None:
    """(standard spelling, the customer's words) of the last date the customer keeps."""
    kept = [p for p in proposals(text) if not _taken_back(text, p.start)]
    if not kept:
        return None
    phrase = kept[-1]
    # "next week, say Tuesday" reads back as "next Tuesday".
    return phrase.canonical(), phrase.canonical() if "," in phrase.text else phrase.text


def _time(text: str) -> tuple[str, str] | None:
    """(HH:MM, the customer's words) of the last time the customer keeps."""
    kept = [p for p in time_proposals(text) if not _taken_back(text, p.start)]
    return (kept[-1].value, kept[-1].text) if kept else None


def _name(text: str) -> str | None:
    for match in NAME.finditer(text):
        value = match.group(1).strip()
        if value.split()[0].casefold() not in _NOT_NAMES:
            return value
    return None


def _labelled_match(field: IntakeFieldRef, text: str) -> re.Match[str] | None:
    for name in (field.label, field.key.replace("_", " ")):
        label = re.escape(name.strip().casefold())
        match = re.search(rf"{label}\s*(?::|-|\bis\b)\s*([^.\n]+)", text, re.IGNORECASE)
        if match:
            return match
    return None


def _labelled(field: IntakeFieldRef, text: str) -> str | None:
    """`Label: value` or `label is value`, the way forms and careful customers write it."""
    match = _labelled_match(field, text)
    return match.group(1).strip() if match else None


def mask_free_text(fields: list[IntakeFieldRef], text: str) -> str:
    """`text` with the values of free-text fields blanked out ("problem description - needs
    an e-bike check plus a basic service"): what the customer describes there is neither the
    service they ask for nor a question to answer."""
    for field in fields:
        if field_kind(field) != "text":
            continue
        match = _labelled_match(field, text)
        if match:
            text = (
                text[: match.start(1)]
                + " " * (match.end(1) - match.start(1))
                + text[match.end(1) :]
            )
    return text


def _service(text: str, services: Iterable[str]) -> str | None:
    """The service the customer keeps: the last one named and not taken back ("not the
    check-up", "instead of the check-up"); a longer name wins over one it contains."""
    lowered = text.casefold()
    found: list[tuple[int, int, str]] = []
    for name in services:
        for m in re.finditer(re.escape(name.casefold()), lowered):
            found.append((m.start(), m.end(), name))
    # "Child check-up" holds "check-up": keep the longest name at each place.
    found = [
        f
        for f in found
        if not any(
            o != f and o[0] <= f[0] and f[1] <= o[1] and o[1] - o[0] > f[1] - f[0] for o in found
        )
    ]
    kept = [f for f in found if not _taken_back(text, f[0])]
    if not kept:
        return None
    return max(kept, key=lambda f: (f[0], f[1] - f[0]))[2]


def extract_spoken(
    fields: list[IntakeFieldRef], customer_messages: list[str], services: Iterable[str]
) -> dict[str, tuple[str, str]]:
    """Per intake field found in the customer's messages: (value, the customer's own words),
    newest value winning."""
    services = list(services)
    out: dict[str, tuple[str, str]] = {}
    for message in customer_messages:
        for field in fields:
            kind = field_kind(field)
            found: tuple[str, str] | None = None
            value = _labelled(field, message) if kind == "text" else None
            if value is None:
                if kind == "email":
                    value = _kept(EMAIL, message)
                elif kind == "phone":
                    value = _kept(PHONE, DATE.sub(" ", EMAIL.sub(" ", message)))
                elif kind == "date":
                    found = _date(message)
                elif kind == "time":
                    found = _time(message)
                elif kind == "name":
                    value = _name(message)
                elif kind == "service":
                    value = _service(mask_free_text(fields, message), services)
            if found is None and value:
                found = (value, value)
            if found:
                out[field.key] = found
    return out


def extract_fields(
    fields: list[IntakeFieldRef], customer_messages: list[str], services: Iterable[str]
) -> dict[str, str]:
    """Values for the intake fields found in the customer's messages, newest value winning."""
    return {k: v for k, (v, _) in extract_spoken(fields, customer_messages, services).items()}
