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


def redact(text: str, *, secrets: list[str] | None = None) -> str:
    """`text` with every known secret value and credential-shaped string replaced."""
    if not text:
        return text
    for value in known_secrets() if secrets is None else secrets:
        text = text.replace(value, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(lambda m: m.group(1) + REDACTED, text)
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
