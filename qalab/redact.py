"""Keep secrets out of everything the lab stores or logs.

A bot may echo its auth header, a KB may contain a key, an HTTP error may quote a request: every
text that reaches a row (turns, case errors, the LLM-call ledger, run errors) or a log line goes
through `redact` first. It removes the secret values the lab itself holds (API keys, the
responder's auth value, the database password, Django's secret key) and anything shaped like a
credential (bearer tokens, `sk-...` keys, `Authorization:`/`api_key=` values).
"""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import urlsplit

REDACTED = "[REDACTED]"
# Shorter values are too likely to be ordinary words or numbers of a conversation.
_MIN_SECRET = 8

_SHAPES = (
    re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"()\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_-]{16,}"),
    re.compile(
        r"(?i)(\b(?:authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token"
        r"|client[_-]?secret|password)\b[\"']?\s*[:=]\s*[\"']?)"
        r"(?!\[REDACTED\]|(?:bearer|basic)\s)[^\s\"',;]{6,}"
    ),
)
# The words each shape's match must contain, so a text without any skips the (costly) pattern:
# a KB of megabytes is redacted at import. Looked up in `_folded(text)` for the two
# case-insensitive shapes, in the text itself for the `sk-` keys.
_NEEDS = (
    ("bearer", "basic"),
    ("sk-", "rk-", "pk-"),
    (
        "authorization",
        "apikey",
        "api_key",
        "api-key",
        "accesstoken",
        "access_token",
        "access-token",
        "clientsecret",
        "client_secret",
        "client-secret",
        "password",
    ),
)
# Besides upper case, re's IGNORECASE matches an ASCII letter with these four characters.
_IGNORECASE_EXTRA = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def _folded(text: str) -> str:
    """`text` lower-cased so that every case-insensitive match of an ASCII word is a substring."""
    if any(char in text for char in _IGNORECASE_EXTRA):  # rare: translate() is slow
        text = text.translate(str.maketrans(_IGNORECASE_EXTRA))
    return text.lower()


def known_secrets() -> list[str]:
    """The secret values this process holds, longest first (read at call time)."""
    from django.conf import settings

    values = [
        getattr(settings, "QALAB_LLM_API_KEY", ""),
        os.environ.get("OPENAI_API_KEY", ""),
        getattr(settings, "SECRET_KEY", ""),
    ]
    auth_env = getattr(settings, "QALAB_RESPONDER_AUTH_ENV", "")
    if auth_env:
        values.append(os.environ.get(auth_env, ""))
    database_url = os.environ.get("DATABASE_URL", "")
    if database_url:
        values.append(urlsplit(database_url).password or "")
    for db in getattr(settings, "DATABASES", {}).values():
        values.append(str(db.get("PASSWORD") or ""))
    unique = {v for v in values if len(v) >= _MIN_SECRET}
    return sorted(unique, key=len, reverse=True)


def _token_like(token: str) -> bool:
    """Whether the word after "Bearer"/"Basic" looks like a credential rather than prose
    ("our basic appointment", "the bearer of good news"): a digit, a capital inside the word,
    or a long run with token punctuation. An all-lowercase token slips through; the lab's
    own secret values are removed by value first."""
    return (
        any(c.isdigit() for c in token)
        or (any(c.isupper() for c in token[1:]) and any(c.islower() for c in token))
        or (len(token) >= 20 and any(c in "._~+/=" for c in token))
    )


def _redact_match(match: re.Match[str]) -> str:
    if match.re is _SHAPES[0] and not _token_like(match.group(0)[len(match.group(1)) :]):
        return match.group(0)
    return match.group(1) + REDACTED


def redact(text: str, *, secrets: list[str] | None = None) -> str:
    """`text` with every known secret value and credential-shaped string replaced."""
    if not text:
        return text
    for value in known_secrets() if secrets is None else secrets:
        text = text.replace(value, REDACTED)
    folded = None
    for shape, needs in zip(_SHAPES, _NEEDS, strict=True):
        if shape.flags & re.IGNORECASE:
            folded = _folded(text) if folded is None else folded
            if not any(word in folded for word in needs):
                continue
        elif not any(word in text for word in needs):
            continue
        redacted = shape.sub(_redact_match, text)
        if redacted != text:
            text, folded = redacted, None
    return text


def redact_values(data: dict[str, str]) -> dict[str, str]:
    """A mapping of texts with each value redacted (extracted fields, usage notes)."""
    secrets = known_secrets()
    return {k: redact(v, secrets=secrets) if isinstance(v, str) else v for k, v in data.items()}


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the formatted message (and drops the arguments)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: logged as it is
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and record.exc_info[1] is not None:
            # A formatter prints exc_text when set: the redacted traceback, not a fresh one.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True
