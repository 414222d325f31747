"""Small text helpers shared by the checks: sentence spans, word tokens, literal quoting."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

# A sentence ends at . ! ? followed by whitespace, at a line break, or at an emoji followed by a
# capital letter. Dots inside numbers
# ("8.30", "80.00") are never followed by whitespace, so they do not split.
_BOUNDARY = re.compile(
    # ... and after an emoji that closes a sentence: "... and the pool 🏊 Ready to join?"
    # ... and after closing markup or quotes: "**Looking for a present?** Our vouchers ..."
    r"(?<=[.!?])\s+|(?<=[.!?][*_\"'”’)])\s+|(?<=[.!?]\*\*)\s+|\n+"
    r"|(?<=[\u2600-\u27bf\U0001f300-\U0001faff\ufe0f])\s+(?=[A-Z])"
)
# A weekday named in full or abbreviated ("Tuesdays", "Thurs.", "sat") and not the start of
# another word ("months", "Sunny"): one place for both the judge's claims and dialogue acts.
WEEKDAY = (
    r"(?:(?P<full>monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?:s|'s)?"
    r"|(?P<abbr>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?)(?![a-z])"
)
DAY_WORD = re.compile(rf"\b{WEEKDAY}", re.IGNORECASE)
# The same without named groups, to sit beside others (or itself) in a larger pattern.
ANY_WEEKDAY = re.sub(r"\(\?P<\w+>", "(?:", WEEKDAY)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_MAX_QUOTE = 240


@dataclass(frozen=True)
class Sentence:
    """A stripped sentence and its exact position in the source text."""

    start: int
    end: int
    text: str


def split_sentences(text: str) -> list[Sentence]:
    """Split text into non-empty sentences; each `text` is exactly `source[start:end]`."""
    spans: list[Sentence] = []
    pos = 0
    for match in _BOUNDARY.finditer(text):
        _add(text, pos, match.start(), spans)
        pos = match.end()
    _add(text, pos, len(text), spans)
    return spans


def _add(text: str, start: int, end: int, spans: list[Sentence]) -> None:
    segment = text[start:end]
    stripped = segment.strip()
    if stripped:
        offset = start + len(segment) - len(segment.lstrip())
        spans.append(Sentence(offset, offset + len(stripped), stripped))


def sentence_at(sentences: list[Sentence], position: int) -> Sentence | None:
    """The sentence whose span contains `position` (`sentences` in order, as `split_sentences`
    gives them: a binary search, so a check looking up every hit of a long reply stays
    linear)."""
    i = bisect_right(sentences, position, key=lambda sentence: sentence.start) - 1
    if i >= 0 and sentences[i].start <= position < sentences[i].end:
        return sentences[i]
    return None


def quote_around(text: str, sentence: Sentence, start: int, end: int) -> str:
    """A literal quote of `text` for a hit at [start, end): its sentence, or a window if long."""
    if len(sentence.text) <= _MAX_QUOTE:
        return sentence.text
    half = (_MAX_QUOTE - (end - start)) // 2
    lo = max(sentence.start, start - max(half, 0))
    hi = min(sentence.end, end + max(half, 0))
    return text[lo:hi].strip() or text[start:end]


def words(text: str) -> list[str]:
    """Lower-case word tokens."""
    return _WORD.findall(text.casefold())


def compact(text: str) -> str:
    """Case-, space- and punctuation-insensitive form: "Mary O'Brien" -> "maryobrien"."""
    return re.sub(r"[\W_]+", "", text.casefold())


def spaced(text: str) -> str:
    """Case- and punctuation-insensitive form that keeps word boundaries."""
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def find_literal(value: str, text: str) -> str | None:
    """The slice of `text` that spells `value` up to case, spacing and punctuation, if any."""
    tokens = re.findall(r"[^\W_]+", value)
    if not tokens:
        return None
    pattern = r"(?<![^\W_])" + r"[\W_]*".join(re.escape(t) for t in tokens) + r"(?![^\W_])"
    match = re.search(pattern, text, re.IGNORECASE)
    return match.group(0) if match else None
