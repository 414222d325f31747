"""Times of day: the one reader of a clock time (24-hour '08:30' / '8.30', 12-hour '9am' /
'9.30 p.m.') and its canonical 'HH:MM' text. In the lowest layer so the org import reads an org
folder's opening hours with it; `generator.facts.clock` re-exports it for the generator and the
judge, which find these times inside replies and KB text."""

from __future__ import annotations

import re

# 24-hour times written with ':' or '.', hour with or without its leading zero.
TIME_RE = re.compile(r"(?<![\d.,:])([01]?\d|2[0-3])[:.]([0-5]\d)(?![\d]|[.,:]\d)")
TIME_12H_RE = re.compile(r"(?<![\d.,:])(\d{1,2})(?:[:.](\d{2}))?\s?([ap])\.?m\b\.?", re.IGNORECASE)


def time_value(hour: int, minute: int) -> str:
    """Canonical time text: (8, 30) -> '08:30'."""
    return f"{hour:02d}:{minute:02d}"


def time_12h(match: re.Match[str]) -> str | None:
    """The 'HH:MM' of one `TIME_12H_RE` match ('9.30pm' -> '21:30'); None for '13pm', '9:75am'."""
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if 1 <= hour <= 12 and minute < 60:
        hour = hour % 12 + (12 if match.group(3).casefold() == "p" else 0)
        return time_value(hour, minute)
    return None


def time_24h(match: re.Match[str]) -> str:
    """The 'HH:MM' of one `TIME_RE` match ('8.30' -> '08:30')."""
    return time_value(int(match.group(1)), int(match.group(2)))
