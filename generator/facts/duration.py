"""Durations: the one reader lives in `qalab.values.duration` (the lowest layer, so the org
import reads an org folder's durations with it too); re-exported here for the generator and the
judge."""

from __future__ import annotations

from qalab.values.duration import (
    COMPOUND_DURATION_RE,
    DURATION_RE,
    MINUTES_PER,
    MONTH,
    NOT_AN_AGE,
    PHRASE_DURATION_RE,
    YEAR,
    compound_minutes,
    duration_minutes,
    phrase_minutes,
    unit_minutes,
)

__all__ = [
    "COMPOUND_DURATION_RE",
    "DURATION_RE",
    "MINUTES_PER",
    "MONTH",
    "NOT_AN_AGE",
    "PHRASE_DURATION_RE",
    "YEAR",
    "compound_minutes",
    "duration_minutes",
    "phrase_minutes",
    "unit_minutes",
]
