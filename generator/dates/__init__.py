"""Dates and times as people say them: how a simulated customer phrases them, and the one
parser that reads them back (used by the simulator, the reference responder and the judge).

**Reference day.** A relative phrase ("next Tuesday", "tomorrow") means one calendar day only
relative to the day it is said. Every blueprint carries that day as `reference_date` (the run's
creation date, see `generator.pipeline.generate_artifacts`): the conversation is imagined to
take place on it. The customer says only phrases that this parser resolves, against that day,
to exactly the persona's canonical fact (ISO date, 24-hour HH:MM); the judge resolves what the
customer said and what the responder extracted against the same day. Without a reference day
(blueprints written before it existed) customers name the month ("the 4th of December").

**Dates** (``resolve(today)``):

- ``2026-12-04``, ``4/12/2026``, ``4.12.26``; ``4 December``, ``the 4th of December``,
  ``December 4th``, ``Friday 4 December`` (a year-less date is the first such day from today);
- ``today``, ``tomorrow``, ``the day after tomorrow``;
- ``Friday``, ``on Friday``, ``this Friday``, ``this coming Friday``: the first Friday after
  today (1 to 7 days ahead);
- ``next Friday``, ``Friday next week``, ``next week, say Friday``: the Friday of the calendar
  week (Monday to Sunday) after today's. Customers say ``next Friday`` only when that is also
  the first Friday after today, so both common readings agree;
- ``the 12th``, ``Friday the 12th``: the first day after today with that day of the month
  (and weekday).

A weekday in a sentence about opening hours ("are you open on Tuesday?") is not a proposed
date (`proposals`).

**Times** (``HH:MM``): ``11:00``, ``10.30``, ``3pm``, ``11 o'clock``, ``11ish``, ``noon``,
``half nine`` (09:30, as said in Ireland and Britain), ``half past 2``, ``quarter past 3``,
``quarter to 4``, and a bare hour after ``at``/``around``/``about``/``say``/``for``. A bare
hour (no am/pm) from 1 to 7 is in the afternoon (13:00-19:00), 8 to 11 in the morning and 12 is
noon, unless the sentence says "morning", "afternoon" or "evening".
"""

from __future__ import annotations

from generator.dates.days import DatePhrase, find_dates, proposals, says_date
from generator.dates.phrasing import date_options, day_part, say_date, say_time, time_options
from generator.dates.times import TimePhrase, find_times, says_time, time_proposals
from generator.dates.words import (
    MONTH_NAMES,
    NUMBER_WORDS,
    ORDINAL_WORDS,
    SPOKEN_DAY,
    SPOKEN_NUMBER,
    SPOKEN_ORDINAL,
    WEEKDAY_NAMES,
    ordinal,
    ordinal_number,
    spoken_number,
)

__all__ = [
    "MONTH_NAMES",
    "NUMBER_WORDS",
    "ORDINAL_WORDS",
    "SPOKEN_DAY",
    "SPOKEN_NUMBER",
    "SPOKEN_ORDINAL",
    "WEEKDAY_NAMES",
    "DatePhrase",
    "TimePhrase",
    "date_options",
    "day_part",
    "find_dates",
    "find_times",
    "ordinal",
    "ordinal_number",
    "proposals",
    "say_date",
    "say_time",
    "says_date",
    "says_time",
    "spoken_number",
    "time_options",
    "time_proposals",
]
