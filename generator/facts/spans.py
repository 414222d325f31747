"""Blanking spans of text, so a value already read is not read again as another kind."""

from __future__ import annotations


def mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each [start, end) span replaced by as many spaces (offsets stay the same)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
