"""The clauses (segments) of a sentence that claims are read from, and the facts inside a
span of text."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def facts_in(facts: list[Fact], start: int, end: int, kind: str) -> list[Fact]:
    """The facts of `kind` that start within [start, end)."""
    return [f for f in facts if f.kind == kind and start <= f.start < end]
