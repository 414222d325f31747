"""Saying dates and times: the ways a simulated customer may phrase a day or a time that the
parser reads back to exactly that value."""

from __future__ import annotations

import random
from datetime import date, timedelta

from generator.dates.days import find_dates
from generator.dates.times import find_times
from generator.dates.words import MONTH_NAMES, NUMBER_WORDS, WEEKDAY_NAMES, ordinal
from generator.schemas import Manner


def date_options(day: date, today: date | None) -> list[str]:
    """Ways a person may say `day` on `today` that resolve back to exactly `day`, the most
    casual first; without a reference day only phrases that name the month."""
    name = WEEKDAY_NAMES[day.weekday()]
    month = MONTH_NAMES[day.month - 1]
    nth = ordinal(day.day)
    options: list[str] = []
    if today is not None:
        ahead = (day - today).days
        same_week = day.isocalendar()[:2] == today.isocalendar()[:2]
        next_week = (day - timedelta(days=7)).isocalendar()[:2] == today.isocalendar()[:2]
        if ahead == 1:
            options.append("tomorrow")
        if ahead == 2:
            options.append("the day after tomorrow")
        if same_week and ahead > 0:
            options += [f"this {name}", f"on {name}"]
        if next_week and ahead <= 7:
            options.append(f"next {name}")
        if next_week:
            options.append(f"{name} next week")
        if 0 < ahead < 28:
            options += [f"{name} the {nth}", f"the {nth}"]
    options += [f"the {nth} of {month}", f"{month} {nth}", f"{name} the {nth} of {month}"]
    return [o for o in dict.fromkeys(options) if _round_trip(o, day, today)]


def _round_trip(option: str, day: date, today: date | None) -> bool:
    found = find_dates(option)
    return len(found) == 1 and found[0].resolve(today or day) == day


def say_date(day: date, today: date | None, rng: random.Random, manner: Manner) -> str:
    """One way this customer says `day`: ISO for a precise customer, else a relative phrase
    when there is one (most people), now and then the day and month."""
    if manner == "precise":
        return day.isoformat()
    options = date_options(day, today)
    named = [o for o in options if " of " in o or o.split()[0] in MONTH_NAMES]
    relative = [o for o in options if o not in named]
    if relative and rng.random() < 0.8:
        return rng.choice(relative)
    return rng.choice(named or options)


_WORD_OF_HOUR = {n: w for w, n in NUMBER_WORDS.items()}


def _twelve(hour: int) -> int:
    return hour % 12 or 12


def time_options(hhmm: str, locale: str = "en_IE") -> list[str]:
    """Ways a person may say `hhmm` that resolve back to exactly it (without day-part words)."""
    hour, minute = (int(x) for x in hhmm.split(":"))
    h = _twelve(hour)
    suffix = "am" if hour < 12 else "pm"
    options: list[str] = []
    word = _WORD_OF_HOUR[h]
    if minute == 0:
        options += [f"at {h}", f"around {h}", f"{h}ish", f"{word} o'clock", f"{h}{suffix}"]
    elif minute == 30:
        if locale.startswith(("en_IE", "en_GB")):
            options += [f"half {word}", f"half {h}"]
        options += [f"half past {word}", f"{h}:30", f"{h}.30{suffix}"]
    elif minute == 15:
        options += [f"quarter past {h}", f"{h}:15"]
    else:
        options.append(f"{h}:{minute:02d}{suffix}")
    return [o for o in options if _time_trip(o, hhmm)]


def _time_trip(option: str, hhmm: str) -> bool:
    found = find_times(option)
    return len(found) == 1 and found[0].value == hhmm


def say_time(hhmm: str, rng: random.Random, manner: Manner, locale: str = "en_IE") -> str:
    """One way this customer says the time: 24-hour for a precise customer, else as people do."""
    if manner == "precise":
        return f"at {hhmm}"
    options = time_options(hhmm, locale)
    return rng.choice(options) if options else f"at {hhmm}"


def day_part(hhmm: str) -> str:
    hour = int(hhmm.split(":")[0])
    return "morning" if hour < 12 else "afternoon" if hour < 17 else "evening"
