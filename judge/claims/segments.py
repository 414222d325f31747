"""The clauses (segments) of a sentence that claims are read from, and the facts inside a
span of text."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

from judge.facts import Fact
from judge.text import Sentence

# A clause boundary inside a sentence. "and"/"or" between two times do not split ("between 9:00
# and 13:00"); " - " does not split either ("8:30 - 18:00").
_SEGMENT_BREAK = re.compile(
    r"[,;]\s+|:\s+|\s+(?:but|while|whilst|whereas|so|plus)\s+"
    r"|\s+(?:and|or)\s+(?!\d)|(?<![\d.m])\s+(?:and|or)\s+(?=\d)"
    r"|\s*[|•·()\[\]]\s*|\s+[–—]\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Segment:
    start: int
    end: int
    text: str


def segments(text: str, sentence: Sentence) -> list[Segment]:
    """The clauses of `sentence` (positions are in `text`)."""
    out: list[Segment] = []
    pos = sentence.start
    for match in _SEGMENT_BREAK.finditer(sentence.text):
        _add_segment(text, pos, sentence.start + match.start(), out)
        pos = sentence.start + match.end()
    _add_segment(text, pos, sentence.end, out)
    return out


def _add_segment(text: str, start: int, end: int, out: list[Segment]) -> None:
    raw = text[start:end]
    stripped = raw.strip()
    if stripped:
        offset = start + len(raw) - len(raw.lstrip())
        out.append(Segment(offset, offset + len(stripped), stripped))


@dataclass(frozen=True)
class FactSpans:
    """A text's facts by kind, ordered by start, so the facts of one clause are found by
    bisection: a scan of every fact for every clause is quadratic on a big KB."""

    starts: dict[str, list[int]] = field(default_factory=dict)
    facts: dict[str, list[Fact]] = field(default_factory=dict)

    @classmethod
    def of(cls, facts: list[Fact]) -> FactSpans:
        index = cls()
        for fact in sorted(facts, key=lambda f: f.start):  # stable: ties keep their order
            index.starts.setdefault(fact.kind, []).append(fact.start)
            index.facts.setdefault(fact.kind, []).append(fact)
        return index


def facts_in(facts: FactSpans, start: int, end: int, kind: str) -> list[Fact]:
    """The facts of `kind` that start within [start, end), in order."""
    starts = facts.starts.get(kind)
    if not starts:
        return []
    return facts.facts[kind][bisect_left(starts, start) : bisect_left(starts, end)]
