"""Times of day in text: every clock time a reply or a KB states (`clock_times`,
`extract_times`). The reader of one clock time and its canonical 'HH:MM' text live in
`qalab.values.clock` (the lowest layer, so the org import reads opening hours with it too);
re-exported here for the generator and the judge."""

from __future__ import annotations

from functools import lru_cache

from generator.facts.money import extract_money
from generator.facts.spans import mask_spans
from qalab.values.clock import TIME_12H_RE, TIME_RE, time_12h, time_24h, time_value

__all__ = [
    "TIME_12H_RE",
    "TIME_RE",
    "clock_times",
    "extract_times",
    "normalize_time",
    "time_12h",
    "time_24h",
    "time_value",
]


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
