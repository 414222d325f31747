"""Opening hours as businesses write them, read into lines of (days, opens, closes) with
'HH:MM' times: the one reader of an org folder's `hours`, on the clock reader of
`qalab.values.clock` (the judge's and the generator's).

Accepted (English day names; a hyphen, an en dash or "to" between two times or two days):

- a time range, with days before or after it or none: "9am-5:30pm", "9-5", "09:00-17:30",
  "Mon-Fri 9 to 5", "Mon-Fri: 9:30 am - 6 pm", "9-5 Mon-Fri", "Sat noon-midnight";
- several, separated by commas, semicolons or lines: "Mon-Fri 9am-5pm, Sat 10-2, closed
  Sundays"; a range without days after one with days is more hours of those days ("Mon-Fri
  9-12, 14-18"), a first range without days covers every day;
- closed days: "closed Sundays", "Sunday: closed", "Sat & Sun closed" take the days out of the
  lines written as text ("9-5, closed Sundays" is Mon-Sat 09:00-17:00);
- times: 24-hour "17:30", "17.30", "17h30", "1730"; 12-hour "5:30pm", "5.30 p.m.", "5 PM";
  "noon", "midnight" (00:00); a bare hour "9".

Ambiguity rule: a time without am/pm is read on the 24-hour clock, except that a closing time
that would not be after the opening time is read as pm when that puts it after ("9-5" is
09:00-17:00, "10-2" is 10:00-14:00, "12-6" is 12:00-18:00), and an opening time without am/pm
before a pm closing time is pm too when that still opens before the close ("7-11pm" is
19:00-23:00, "9-5pm" is 09:00-17:00). A closing time before the opening time after that rule
is past midnight ("6pm-2am", "22:00-02:00"). Write am/pm or 24-hour times to mean otherwise.

Lines read from text name their days canonically ("Mon-Fri", "Sat, Sun", "Mon-Sun"), so the
generator reads the same days. Errors name the value and give an example (`HoursProblem`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qalab.values.clock import TIME_12H_RE, TIME_RE, time_12h, time_value

DAY_ABBREVIATIONS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
TIME_EXAMPLE = "write e.g. '17:30' or '5:30pm'"
HOURS_EXAMPLE = "write e.g. 'Mon-Fri 9am-5:30pm, Sat 10-2, closed Sundays'"
HOURS_EXAMPLES = [
    "9am-5:30pm", "9-5", "09:00-17:30", "Mon–Fri 9 to 5", "Mon-Fri 9am-5pm, Sat 10-2",
    "closed Sundays", "Sunday: closed", "Sat noon-midnight", "Mon-Fri 9-12, 14-18",
]  # fmt: skip

MAX_TEXT = 2_000
_DAY = (
    r"(?<![a-z])(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:s|nesday)?|thu(?:r(?:s(?:day)?)?)?|"
    r"fri(?:day)?|sat(?:urday)?|sun(?:day)?)s?(?![a-z])\.?"
)
_GROUP = (
    r"(?<![a-z])(?:daily|every\s?day|all\s+week|(?:7|seven)\s+days(?:\s+a\s+week)?|"
    r"weekdays|week-?ends?)(?![a-z])"
)
_GROUP_DAYS = {"weekday": range(5), "weekend": range(5, 7), "week-end": range(5, 7)}
_DAY_ITEM = rf"(?:{_DAY}(?:\s*(?:-|–|—|to|through|thru|till|until)\s*{_DAY})?|{_GROUP})"
_DAYS = rf"{_DAY_ITEM}(?:\s*(?:,|&|\+|/|\band\b)\s*{_DAY_ITEM})*"
_TIME = (
    r"(?:(?:12\s*)?(?:noon|midday|midnight)|\d{4}|"
    r"\d{1,2}(?:\s*[:.h]\s*\d{2})?(?:h(?![a-z]))?(?:\s*[ap]\.?\s?m\b\.?)?)"
)
_JOIN = r"\s*(?:-|–|—|\bto\b|\btill?\b|\buntil\b)\s*"
_RANGE = rf"(?:from\s+)?{_TIME}{_JOIN}{_TIME}"
_RANGES = rf"{_RANGE}(?:\s*(?:\band\b|&|\+|/)\s*{_RANGE})*"
_ONE_RANGE = re.compile(rf"(?:from\s+)?(?P<open>{_TIME}){_JOIN}(?P<close>{_TIME})", re.I)
_OPEN_LINE = re.compile(
    rf"^(?:(?P<days>{_DAYS})\s*:?\s*)?(?P<ranges>{_RANGES})$"
    rf"|^(?P<ranges2>{_RANGES})\s*,?\s*(?:on\s+)?(?P<days2>{_DAYS})$",
    re.I,
)
_HOLIDAYS = r"(?:\s*(?:,|&|\band\b)\s*(?:bank|public)\s+holidays)?"
_CLOSED_LINE = re.compile(
    rf"^(?:closed|shut)\s*(?:on\s+)?:?\s*(?P<a>{_DAYS}){_HOLIDAYS}$"
    rf"|^(?P<b>{_DAYS}){_HOLIDAYS}\s*:?\s*(?:[-–—]\s*)?(?:closed|shut)$",
    re.I,
)
_DAYS_ONLY = re.compile(rf"^{_DAYS}$", re.I)
_PREFIX = re.compile(
    r"^(?:(?:we(?:'re|\s+are)\s+)?open(?:ing)?(?:\s+(?:hours|times))?|hours)\b\s*:?\s*", re.I
)
_SPLIT = re.compile(rf"\s*(?:[;\n|,]|\s(?:and|&)\s(?=\s*(?:{_DAY}|{_GROUP})))\s*", re.I)
_CLOCK_H = re.compile(r"^(\d{1,2})(?:\s*[:.h]\s*(\d{2}))?h?$")
_MILITARY = re.compile(r"^([01]\d|2[0-3])([0-5]\d)$")


Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class HoursProblem:
    """One value the reader cannot take: where (inside `hours`), the value, and why."""

    loc: Loc
    value: object
    message: str


@dataclass(frozen=True)
class _Clock:
    minutes: int
    # A bare 12-hour reading ("9", "5:30"): the ambiguity rule may move it to pm.
    bare_hour: int | None = None
    pm: bool | None = None  # True/False when the text said pm/am


def short(value: object, limit: int = 60) -> str:
    """`value` quoted for a message, cut to `limit` characters."""
    text = str(value)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _clean(text: str) -> str:
    return " ".join(text.split()).casefold()


def _clock(value: object) -> _Clock | None:
    """One time of day as written ('9am', '17:30', 9, 17.3, 'noon'); None when it is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):  # YAML reads `opens: 8.30` as 8.3
        value = f"{value:.2f}"
    if isinstance(value, int):
        value = f"{value:04d}" if value >= 100 else str(value)
    if not isinstance(value, str):
        return None
    text = _clean(value).rstrip(".")
    if text in ("noon", "midday", "12 noon", "12noon", "12 midday"):
        return _Clock(12 * 60)
    if text in ("midnight", "12 midnight", "12midnight"):
        return _Clock(0)
    if m := TIME_12H_RE.fullmatch(text + ("." if re.search(r"[ap]\.m$", text) else "")):
        hhmm = time_12h(m)
        return None if hhmm is None else _Clock(_minutes(hhmm), pm=m.group(3) == "p")
    if m := _MILITARY.match(text):
        return _Clock(int(m.group(1)) * 60 + int(m.group(2)))
    if m := TIME_RE.fullmatch(text) or _CLOCK_H.match(text):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if (hour, minute) == (24, 0):
            return _Clock(0)
        if hour > 23 or minute > 59:
            return None
        # "9", "5:30", "10": a 12-hour reading is possible; "09:00", "10:00", "17:30" are
        # 24-hour (so a stored 'HH:MM' always reads back as itself).
        twelve = 1 <= hour <= 12 and (len(m.group(1)) == 1 or m.group(2) is None)
        return _Clock(hour * 60 + minute, bare_hour=hour if twelve else None)
    return None


def _minutes(hhmm: str) -> int:
    hour, minute = hhmm.split(":")
    return int(hour) * 60 + int(minute)


def _text(minutes: int) -> str:
    return time_value(minutes // 60, minutes % 60)


def time_pair(opens: _Clock, closes: _Clock) -> tuple[str, str]:
    """Opening and closing 'HH:MM' by the ambiguity rule (module docstring)."""
    start, end = opens.minutes, closes.minutes
    if opens.bare_hour is not None and closes.pm is not None:
        same = (opens.bare_hour % 12 + (12 if closes.pm else 0)) * 60 + start % 60
        if same < end:
            start = same
    later = end + 12 * 60
    if closes.bare_hour is not None and closes.bare_hour < 12 and end <= start < later:
        end = later
    return _text(start), _text(end)


def read_time_pair(
    opens: object, closes: object
) -> tuple[tuple[str, str] | None, list[HoursProblem]]:
    """An hours line's `opens` and `closes` as written ('9am', '17:30', 9), read together by
    the ambiguity rule; the problems name the field and the value."""
    problems = [
        HoursProblem((field,), value, f"{short(value)} is not a time; {TIME_EXAMPLE}")
        for field, value in (("opens", opens), ("closes", closes))
        if _clock(value) is None
    ]
    start, end = _clock(opens), _clock(closes)
    if start is None or end is None:
        return None, problems
    return time_pair(start, end), []


def days_of(text: str) -> set[int]:
    """Weekday numbers (Mon = 0) of a days text this reader accepts ('Mon-Fri, Sun')."""
    out: set[int] = set()
    for item in re.finditer(_DAY_ITEM, _clean(text), re.I):
        days = [_day_index(d.group(0)) for d in re.finditer(_DAY, item.group(0), re.I)]
        if len(days) == 2:
            out |= {(days[0] + k) % 7 for k in range((days[1] - days[0]) % 7 + 1)}
        elif days:
            out.add(days[0])
        else:
            word = re.sub(r"s$", "", item.group(0).casefold())
            out |= set(_GROUP_DAYS.get(word, range(7)))
    return out


def _day_index(word: str) -> int:
    return [d.casefold() for d in DAY_ABBREVIATIONS].index(word.casefold()[:3])


def days_text(days: set[int]) -> str:
    """Canonical days: {0..4} -> 'Mon-Fri', {5, 6} -> 'Sat, Sun', {0, 2} -> 'Mon, Wed'."""
    runs: list[list[int]] = []
    for day in sorted(days):
        if runs and runs[-1][-1] == day - 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    parts = []
    for run in runs:
        names = [DAY_ABBREVIATIONS[d] for d in run]
        parts += [f"{names[0]}-{names[-1]}"] if len(run) > 2 else names
    return ", ".join(parts)


def _clauses(text: str) -> list[str]:
    """The clauses of an hours text; a clause naming days only joins the next one ("Mon, Wed
    9-5"), or the one before it when last ("closed Sat, Sun")."""
    parts = [" ".join(p.split()) for p in _SPLIT.split(text) if p and p.strip()]
    out: list[str] = []
    pending = ""
    for part in parts:
        part = _PREFIX.sub("", part) or part
        if _DAYS_ONLY.match(part):
            pending = f"{pending}, {part}" if pending else part
            continue
        out.append(f"{pending}, {part}" if pending else part)
        pending = ""
    if pending:
        if out:
            out[-1] = f"{out[-1]}, {pending}"
        else:
            out.append(pending)
    return out


@dataclass
class _Line:
    days: set[int]
    opens: str
    closes: str
    clause: str


def _range_lines(
    clause: str, ranges: str, days: set[int], loc: Loc
) -> tuple[list[_Line], list[HoursProblem]]:
    """The lines of one clause's time ranges ("9-12 & 14-18"), or its problems."""
    lines: list[_Line] = []
    problems: list[HoursProblem] = []
    for pair in _ONE_RANGE.finditer(ranges):
        start, end = _clock(pair.group("open")), _clock(pair.group("close"))
        if start is None or end is None:
            for text, read in ((pair.group("open"), start), (pair.group("close"), end)):
                if read is None:
                    message = f"{short(text)} in {short(clause)} is not a time; {TIME_EXAMPLE}"
                    problems.append(HoursProblem(loc, text, message))
            continue
        opens, closes = time_pair(start, end)
        if opens == closes:
            message = f"{short(clause)} opens and closes at {opens}; {HOURS_EXAMPLE}"
            problems.append(HoursProblem(loc, clause, message))
            continue
        lines.append(_Line(set(days), opens, closes, clause))
    return lines, problems


def read_hours_text(text: str, loc: Loc = ()) -> tuple[list[_Line], set[int], list[HoursProblem]]:
    """Read one hours text: its lines (closed days not yet taken out), its closed days, and
    the problems (at `loc`, naming the clause and giving an example)."""
    lines: list[_Line] = []
    closed: set[int] = set()
    problems: list[HoursProblem] = []
    previous: set[int] | None = None
    if len(text) > MAX_TEXT:
        message = f"{len(text):,} characters: write opening hours in under {MAX_TEXT:,}"
        return [], set(), [HoursProblem(loc, text, message)]
    for clause in _clauses(text):
        if m := _CLOSED_LINE.match(clause):
            closed |= days_of(m.group("a") or m.group("b"))
            continue
        m = _OPEN_LINE.match(clause)
        if m is None:
            if _DAYS_ONLY.match(clause):
                message = f"{short(clause)} names days but no hours; write e.g. 'Mon-Fri 9-5'"
            else:
                message = f"{short(clause)} is not days and opening times; {HOURS_EXAMPLE}"
            problems.append(HoursProblem(loc, clause, message))
            continue
        written = m.group("days") or m.group("days2")
        if written:
            previous = days_of(written)
        elif previous is None:
            previous = set(range(7))  # a first range without days: every day
        found, bad = _range_lines(clause, m.group("ranges") or m.group("ranges2"), previous, loc)
        lines += found
        problems += bad
    return lines, closed, problems


_LINE_KEYS = frozenset({"days", "opens", "closes"})


def _items(value: object) -> tuple[list[tuple[Loc, object]], list[HoursProblem]]:
    """The entries of an hours value, each with its place: text, a list, or a mapping of days
    to times ('Sun: closed' is read as the text 'Sun closed')."""
    if isinstance(value, str):
        return [((), value)], []
    if isinstance(value, list):
        return [((i,), item) for i, item in enumerate(value)], []
    if isinstance(value, dict) and _LINE_KEYS & set(value):
        return [((0,), value)], []  # one {days, opens, closes} line without its list
    if isinstance(value, dict):
        items: list[tuple[Loc, object]] = []
        problems = []
        for days, times in value.items():
            if times in (None, False):
                times = "closed"
            if isinstance(times, str):
                items.append(((str(days),), f"{days} {times}"))
            else:
                message = "not opening times; write e.g. '9-5' or 'closed'"
                problems.append(HoursProblem((str(days),), times, message))
        return items, problems
    message = f"opening hours are text or a list, not {type(value).__name__}; {HOURS_EXAMPLE}"
    return [], [HoursProblem((), value, message)]


@dataclass(frozen=True)
class HoursReading:
    """The lines of an hours value, where each was written (`places`: its place inside
    `hours`, e.g. (1,) or ("Sat",)), and what could not be read."""

    lines: list[object]
    places: list[Loc]
    problems: list[HoursProblem]


def read_hours(value: object) -> HoursReading:
    """An org folder's whole `hours` value as the lines `HoursSpec` takes: text ("Mon-Fri 9-5,
    Sat 10-2, closed Sundays"), a mapping of days to times or "closed" ({"Mon-Fri": "9-5",
    "Sun": "closed"}), or a list of texts and {days, opens, closes} mappings (those are left
    as they are, for `read_time_pair`). Empty (None, "") is no hours. The closed days of the
    texts are taken out of the lines read from texts. Problems have `loc` inside `hours`."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return HoursReading([], [], [])
    items, problems = _items(value)
    out: list[tuple[Loc, object]] = []
    closed: set[int] = set()
    for loc, item in items:
        if not isinstance(item, str):
            out.append((loc, item))
            continue
        lines, shut, found = read_hours_text(item, loc)
        closed |= shut
        problems += found
        out += [(loc, line) for line in lines]
    kept: list[tuple[Loc, object]] = []
    for loc, line in out:
        if isinstance(line, _Line):
            days = line.days - closed
            if not days:
                message = f"{short(line.clause)} is closed on every day it names"
                problems.append(HoursProblem(loc, line.clause, message))
                continue
            line = {"days": days_text(days), "opens": line.opens, "closes": line.closes}
        kept.append((loc, line))
    return HoursReading([line for _, line in kept], [loc for loc, _ in kept], problems)
