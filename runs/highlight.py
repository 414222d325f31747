"""Evidence highlighting: mark the quotes a finding cites inside untrusted transcript text.

The text (a chatbot reply, a customer message, a fixture) is never trusted: every piece of it is
HTML-escaped, and only the `<mark>` and `<br>` elements built here are markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

_SPACE = re.compile(r"\s+")


def _find(text: str, quote: str) -> tuple[int, int] | None:
    """Where `quote` is in `text`: exactly, else ignoring case, else ignoring runs of spaces."""
    quote = quote.strip()
    if not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    at = text.lower().find(quote.lower())
    if at >= 0:
        return at, at + len(quote)
    words = [re.escape(w) for w in _SPACE.split(quote) if w]
    match = re.search(r"\s+".join(words), text, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def find_spans(text: str, marks: Iterable[tuple[str, int]]) -> list[tuple[int, int, list[int]]]:
    """Non-overlapping (start, end, finding ids) spans of the quotes found in `text`, in order.

    Overlapping quotes merge into one span that lists every finding citing it.
    """
    found = sorted(
        (span[0], span[1], finding_id)
        for quote, finding_id in marks
        if (span := _find(text, quote)) is not None
    )
    merged: list[tuple[int, int, list[int]]] = []
    for start, end, finding_id in found:
        if merged and start < merged[-1][1]:
            last_start, last_end, ids = merged[-1]
            merged[-1] = (last_start, max(last_end, end), [*ids, finding_id])
        else:
            merged.append((start, end, [finding_id]))
    return merged


def _escape_lines(text: str) -> str:
    return "<br>".join(escape(line) for line in text.split("\n"))


def highlight(text: str, marks: Iterable[tuple[str, int]]) -> SafeString:
    """`text` escaped, line breaks as `<br>`, each cited quote in a `<mark class="qa-evidence">`
    that links the findings citing it (`data-findings`, title)."""
    out: list[str] = []
    pos = 0
    for start, end, ids in find_spans(text, marks):
        out.append(_escape_lines(text[pos:start]))
        labels = ", ".join(f"#{i}" for i in ids)
        out.append(
            format_html(
                '<mark class="qa-evidence" id="evidence-{}-{}" data-findings="{}" '
                'title="evidence of finding {}">{}</mark>',
                ids[0],
                start,
                " ".join(str(i) for i in ids),
                labels,
                mark_safe(_escape_lines(text[start:end])),  # noqa: S308 - escaped just above
            )
        )
        pos = end
    out.append(_escape_lines(text[pos:]))
    return mark_safe("".join(out))  # noqa: S308 - every piece of text is escaped
