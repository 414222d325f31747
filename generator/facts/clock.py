"""Times of day: the one reader of clock times (24-hour '08:30' / '8.30', 12-hour '9am' /
'9.30 p.m.') shared by generator and judge, and their canonical 'HH:MM' text."""

from __future__ import annotations

import re
from functools import lru_cache

from generator.facts.money import extract_money
from generator.facts.spans import mask_spans

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


def clock_times(text: str) -> list[tuple[str, int, int]]:
    """Every clock time as ('HH:MM', start, end), in order: 12-hour times first, then 24-hour
    ones in what is left (so '9.30pm' is 21:30 only)."""
    found = []
    twelve = list(TIME_12H_RE.finditer(text))
    for m in twelve:
        value = time_12h(m)
        if value is not None:
            found.append((value, m.start(), m.end()))
    rest = mask_spans(text, [m.span() for m in twelve])
    found += [(time_24h(m), m.start(), m.end()) for m in TIME_RE.finditer(rest)]
    return sorted(found, key=lambda t: t[1])


def normalize_time(text: str) -> str | None:
    """'8.30' / '08:30' / '8.30am' -> '08:30'; None when `text` holds no clock time."""
    found = clock_times(text)
    return found[0][0] if found else None


def extract_times(text: str) -> list[str]:
    """Every clock time as 'HH:MM', in order, ignoring amounts such as '12.50 EUR'."""
    if not any(c.isdigit() for c in text):
        return []  # no clock time without a digit: skip the (costly) patterns
    return list(_times(text))


@lru_cache(maxsize=8192)
def _times(text: str) -> tuple[str, ...]:
    # Cached like money: the generator's fact check reads the same windows for every fact.
    masked = mask_spans(text, [(s, e) for _, s, e in extract_money(text)])
    return tuple(value for value, _, _ in clock_times(masked))
