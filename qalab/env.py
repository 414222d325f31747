"""Small strict parsers for settings taken from the environment."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def envbool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be >= {minimum}")
    return value


def envshare(name: str, default: float) -> float:
    """A fraction between 0 and 1."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if not 0 <= value <= 1:
        raise ImproperlyConfigured(f"{name}={value} must be between 0 and 1")
    return value


def envlist(name: str) -> tuple[str, ...]:
    """A comma-separated list (empty items dropped)."""
    return tuple(item.strip() for item in os.environ.get(name, "").split(",") if item.strip())


_HOST_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def envhosts(name: str) -> tuple[str, ...]:
    """Comma-separated host names and networks (CIDR, or one address): each item normalized
    (a name lower-cased without its final dot, a network as `ip_network` writes it)."""
    items: list[str] = []
    for item in envlist(name):
        try:
            items.append(str(ipaddress.ip_network(item, strict=False)))
            continue
        except ValueError:
            pass
        host = item.lower().rstrip(".")
        labels = host.split(".")
        if "/" in item or not host or len(host) > 253 or not all(map(_HOST_LABEL.match, labels)):
            raise ImproperlyConfigured(
                f"{name}: {item!r} is neither a host name nor a network (10.0.0.0/8, ::1)"
            )
        items.append(host)
    return tuple(items)


def envthresholds(name: str) -> dict[str, float]:
    """`rule=0.9,rule2=0.75`: a threshold in [0, 1] per named rule (the names are checked
    against the judge's rules by the runs app when it loads)."""
    values: dict[str, float] = {}
    for item in envlist(name):
        rule, sep, raw = item.partition("=")
        rule = rule.strip()
        if not sep or not rule:
            raise ImproperlyConfigured(f"{name}: {item!r} is not RULE=THRESHOLD")
        try:
            value = float(raw)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {item!r}: {raw.strip()!r} is not a number"
            ) from None
        if not 0 <= value <= 1:
            raise ImproperlyConfigured(f"{name}: {item!r}: the threshold must be between 0 and 1")
        values[rule] = value
    return values


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = envstr(name, default) or default
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(choices)}")
    return value


def envdb(name: str, default_sqlite: Path) -> dict[str, Any]:
    """DATABASE_URL when set, else an SQLite file tuned for a web process plus a worker."""
    url = envstr(name)
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(default_sqlite),
            "OPTIONS": {
                # The demo runs a web server and a worker on one file: wait for locks, take the
                # write lock up front, and let readers proceed while a writer works.
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    try:
        config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj_database_url raises several types for a bad URL
        raise ImproperlyConfigured(f"{name} is not a valid database URL: {exc}") from exc
    if not config.get("ENGINE"):
        raise ImproperlyConfigured(f"{name}: unsupported database scheme")
    return dict(config)
