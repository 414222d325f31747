"""Weekdays named in text, the days a text says are open or closed with their opening and
closing times, and the manifest's hours by weekday."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.domain import parse_days
from generator.schemas import Manifest, ManifestHours
from judge.claims.segments import FactSpans, Segment, facts_in, segments
from judge.facts import Fact, extract_facts, time_variants
from judge.text import DAY_WORD, Sentence, split_sentences

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


_DAY_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|through|thru|until|till)\s*$", re.IGNORECASE)
_DAY_GROUPS = (
    (re.compile(r"\bweekdays?\b", re.IGNORECASE), frozenset(range(5))),
    (re.compile(r"\bweekends?\b", re.IGNORECASE), frozenset({5, 6})),
    (
        re.compile(
            r"\b(?:every ?day|daily|(?:7|seven) days(?: a week)?|all week)\b|\b24/7\b",
            re.IGNORECASE,
        ),
        frozenset(range(7)),
    ),
)
# Lower-case abbreviations that are ordinary words ("sat down", "the sun") count only in ranges.
_AMBIGUOUS_ABBR = frozenset({"sat", "sun", "wed"})
_LISTED_BEFORE = re.compile(r"(?:^|[,;|/])\s*$")
_LISTED_AFTER = re.compile(r"\s*(?::|-|–|\d|closed\b|open\b)", re.IGNORECASE)


@dataclass(frozen=True)
class DayMention:
    start: int
    end: int
    days: frozenset[int]


def day_number(word: str) -> int:
    return [d[:3].casefold() for d in WEEKDAYS].index(word[:3].casefold())


def day_mentions(text: str) -> list[DayMention]:
    """Weekdays named in text: single days, ranges ('Mon-Thu', 'Monday to Friday') and groups
    ('weekdays', 'every day', '24/7')."""
    named = list(DAY_WORD.finditer(text))
    out: list[DayMention] = []
    used: set[int] = set()
    for i, match in enumerate(named):
        if i in used:
            continue
        nxt = named[i + 1] if i + 1 < len(named) else None
        if nxt and _DAY_RANGE_JOIN.match(text[match.end() : nxt.start()]):
            first, last = day_number(match.group(0)), day_number(nxt.group(0))
            days = frozenset((first + k) % 7 for k in range((last - first) % 7 + 1))
            out.append(DayMention(match.start(), nxt.end(), days))
            used.add(i + 1)
            continue
        abbr = match.group("abbr")
        if (
            abbr in _AMBIGUOUS_ABBR
            and not _LISTED_BEFORE.search(text[: match.start()])
            and not _LISTED_AFTER.match(text[match.end() :])
        ):
            continue  # lower-case "sat"/"sun"/"wed" in prose is not a day
        out.append(DayMention(match.start(), match.end(), frozenset({day_number(match.group(0))})))
    for pattern, days in _DAY_GROUPS:
        for match in pattern.finditer(text):
            out.append(DayMention(match.start(), match.end(), days))
    return sorted(out, key=lambda m: m.start)


_CLOSED_CUE = re.compile(
    r"\bclosed\b(?!\s+(?:from|after|between|for lunch|until|till)|\s+at\s+\d)"
    r"|\bshut\b(?!\s+at\s+\d)"
    r"|\b(?:not|never|n't|no longer)\s+open\b|\b(?:don't|dont|do not|does not|doesn't)\s+"
    r"(?:open|work|operate)\b|\boutside (?:of )?(?:our |the )?(?:opening |business )?hours\b"
    r"|\bno (?:opening|surgery|clinic)\b|\bday off\b",
    re.IGNORECASE,
)
_OPEN_CUE = re.compile(
    r"\bopens?\b|\b(?:opening|business|surgery|clinic|our) hours\b", re.IGNORECASE
)
# A time in the same clause as one of these is a booking or a break, not opening hours.
_NOT_HOURS = re.compile(
    r"\b(?:appointments?|slots?|book\w*|request\w*|reserv\w*|see you|pencil\w*|noted|arriv\w*"
    r"|come in|available|availability|free|works?|suits?|lunch|break|visit|last|earliest"
    r"|latest|call(?:ed)? back|answered|reply|replies)\b",
    re.IGNORECASE,
)
_TIME_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|until|till|til|through|and)\s*$", re.IGNORECASE)
_CLOSES_BEFORE = re.compile(
    r"(?:until|till|til|to|clos\w*|shut\w*|finish\w*|end\w*)\s*(?:at\s*)?(?:around\s*|about\s*)?$",
    re.IGNORECASE,
)
_OPENS_BEFORE = re.compile(
    r"(?:from|open\w*|start\w*)\s*(?:at\s*|from\s*)?(?:around\s*|about\s*)?$", re.IGNORECASE
)


@dataclass(frozen=True)
class DayClaim:
    """'open'/'closed' on a day, or the day's opening ('opens') / closing ('closes') time.

    `times` holds every reading of a time written without am/pm ("6:00" -> 06:00 and 18:00)."""

    kind: str  # "open" | "opens" | "closes"
    day: int
    is_open: bool
    times: frozenset[str]
    start: int
    end: int
    sentence: Sentence
    derived: bool = False


def _polarity(segment: Segment, mention_start: int | None) -> bool | None:
    """Open (True) / closed (False) said in the clause; the cue nearest the day wins a tie."""
    closed = list(_CLOSED_CUE.finditer(segment.text))
    closed_spans = [(m.start(), m.end()) for m in closed]
    opened = [
        m
        for m in _OPEN_CUE.finditer(segment.text)
        if not any(s <= m.start() < e for s, e in closed_spans)
    ]
    if closed and not opened:
        return False
    if opened and not closed:
        return True
    if not closed or mention_start is None:
        return None
    where = mention_start - segment.start
    nearest_closed = min(abs(m.start() - where) for m in closed)
    nearest_open = min(abs(m.start() - where) for m in opened)
    return nearest_open < nearest_closed


def day_claims(text: str, *, include_questions: bool = False) -> list[DayClaim]:
    """Open/closed days and opening/closing times the text states, clause by clause; a clause
    naming only days ("Monday and") passes them on to the next clause."""
    facts = FactSpans.of(extract_facts(text))
    claims: list[DayClaim] = []
    for sentence in split_sentences(text):
        if "?" in sentence.text and not include_questions:
            continue  # a question states nothing
        pending: set[int] = set()
        last: frozenset[int] = frozenset()
        for segment in segments(text, sentence):
            mentions = day_mentions(segment.text)  # positions relative to the segment
            here = frozenset().union(*(m.days for m in mentions)) if mentions else frozenset()
            times = facts_in(facts, segment.start, segment.end, "time")
            polarity = _polarity(segment, segment.start + mentions[0].start if mentions else None)
            if here and polarity is None and not times:
                pending |= here
                continue
            if here:
                effective = here | pending
            elif pending:
                effective = frozenset(pending)
            else:
                effective = last
            pending = set()
            last = effective
            if not effective:
                continue
            spans = _hours(text, segment, times)
            if polarity is None and any(kind == "opens" for kind, _, _ in spans):
                polarity = True  # "Sat 9:00-13:00": a day with hours is an open day
            for day in sorted(effective):
                if polarity is not None:
                    claims.append(
                        DayClaim(
                            "open",
                            day,
                            polarity,
                            frozenset(),
                            segment.start,
                            segment.end,
                            sentence,
                        )
                    )
                for kind, fact, _ in spans:
                    claims.append(
                        DayClaim(
                            kind,
                            day,
                            True,
                            frozenset(time_variants(fact)),
                            segment.start,
                            segment.end,
                            sentence,
                        )
                    )
    return claims


def _hours(text: str, segment: Segment, times: list[Fact]) -> list[tuple[str, Fact, int]]:
    """('opens'|'closes', time fact, position) stated in a clause: a range, or a single time
    introduced by 'from'/'until'. None when the clause is about a booking or a break."""
    if not times or _NOT_HOURS.search(segment.text):
        return []
    out: list[tuple[str, Fact, int]] = []
    i = 0
    while i < len(times):
        fact = times[i]
        nxt = times[i + 1] if i + 1 < len(times) else None
        if nxt and _TIME_RANGE_JOIN.match(text[fact.end : nxt.start]):
            out += [("opens", fact, fact.start), ("closes", nxt, nxt.start)]
            i += 2
            continue
        before = text[max(segment.start, fact.start - 30) : fact.start]
        if _CLOSES_BEFORE.search(before):
            out.append(("closes", fact, fact.start))
        elif _OPENS_BEFORE.search(before):
            out.append(("opens", fact, fact.start))
        i += 1
    return out


def manifest_days(manifest: Manifest) -> dict[int, ManifestHours]:
    """Weekday -> the manifest hours line that covers it (the first, if several do)."""
    out: dict[int, ManifestHours] = {}
    for line in manifest.hours:
        for day in sorted(parse_days(line.days)):
            out.setdefault(day, line)
    return out


def day_label(days: list[int]) -> str:
    """[0, 1, 2] -> 'Monday-Wednesday'; [5] -> 'Saturday'; [0, 4] -> 'Monday, Friday'."""
    days = sorted(set(days))
    if not days:
        return ""
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return f"{WEEKDAYS[days[0]]}-{WEEKDAYS[days[-1]]}"
    return ", ".join(WEEKDAYS[d] for d in days)
