"""Markup debris (HTML entities and tags, stray emphasis, table rules and cells, inline
headings and bullets) and scanning garble ("vehic1e", "6prn") a reply copies from the KB."""

from __future__ import annotations

import re

from judge.lexicon import EVERYDAY, frequency

# (pattern, label): debris that is noise wherever it appears, if the KB has it too.
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{2,5}|#[xX][0-9A-Fa-f]{2,4});")
_TAG = re.compile(
    r"</?(?:br|p|div|span|b|i|u|em|strong|li|ul|ol|table|tr|td|th|tbody|thead|h[1-6]|hr|font"
    r"|sup|sub|small|center|blockquote|pre|code)\b[^<>]{0,120}?/?>",
    re.IGNORECASE,
)
# Without its opening pipe, a rule is read from the start of the whitespace before it only (a run
# of spaces is read once, not once from each space: issue 33).
_TABLE_RULE = re.compile(
    r"(?:\||(?<!\s))(?:\s*+:?-{3,}+:?\s*+\|)+(?:\s*+:?-{3,}+:?)?\|?|\|\s*+:?-{3,}+:?"
)
_EMPHASIS = re.compile(r"\*\*|__")
_BOLD = re.compile(r"\*\*[^*\n]{1,80}\*\*")  # a bold span
# A '#' heading or a bullet after other text on the same line ("says: ## Booking ...").
_STRAY_HEADING = re.compile(r"(?<=\S)[ \t]+(#{1,6})[ \t]+(?=[A-Za-z])")
_STRAY_BULLET = re.compile(r"(?<=\S)[ \t]+([•▪◦](?=[ \t]*[A-Za-z])|\*(?=[ \t]+[A-Za-z]))")
_CELL = re.compile(r"(?<![ \t])[ \t]++\|[ \t]+")


def _kb_has(kb: str, token: str, reply: str, start: int, end: int) -> bool:
    """The KB writes `token` (any case) next to the word the reply writes next to it."""
    before = re.search(r"([A-Za-z]+)[^A-Za-z\n]*$", reply[:start])
    after = re.match(r"[^A-Za-z\n]*([A-Za-z]+)", reply[end:])
    escaped = re.escape(token)
    patterns = []
    if before:
        patterns.append(rf"\b{re.escape(before.group(1))}[^A-Za-z\n]{{0,8}}{escaped}")
    if after:
        patterns.append(rf"{escaped}[^A-Za-z\n]{{0,8}}{re.escape(after.group(1))}\b")
    return any(re.search(p, kb, re.IGNORECASE) for p in patterns)


def markup_spans(reply: str, kb: str) -> list[tuple[int, int, str, str]]:
    """(start, end, debris token, label) for markup debris in `reply` that the KB spells too."""
    found: list[tuple[int, int, str, str]] = []
    kb_folded = kb.casefold()
    for match in _ENTITY.finditer(reply):
        if match.group(0).casefold() in kb_folded:
            found.append((match.start(), match.end(), match.group(0), "an HTML entity"))
    kb_tags = {m.group(0).strip("</>").split()[0].casefold() for m in _TAG.finditer(kb)}
    for match in _TAG.finditer(reply):
        if match.group(0).strip("</>").split()[0].casefold() in kb_tags:
            found.append((match.start(), match.end(), match.group(0), "an HTML tag"))
    if _TABLE_RULE.search(kb):
        for match in _TABLE_RULE.finditer(reply):
            text = match.group(0).strip()
            start = match.start() + match.group(0).index(text)
            line_start = reply.rfind("\n", 0, start) + 1
            line_end = reply.find("\n", start)
            line = reply[line_start : len(reply) if line_end < 0 else line_end]
            above = reply[: max(line_start - 1, 0)].rsplit("\n", 1)[-1] if line_start else ""
            # A rule on its own line under a header row is a table the reply lays out itself.
            if line.strip() == text and above.strip().startswith("|"):
                continue
            if "|" in text:
                found.append((start, start + len(text), text, "a table rule"))
    emphasis = list(_EMPHASIS.finditer(reply))
    # "Here is what our information says: **Trial lesson (30 min):** £15": a KB heading label
    # pasted into a sentence by a bot that writes no markdown of its own (every bold span of the
    # reply is the KB's, character for character). A bold label opening a line is formatting.
    bold = list(_BOLD.finditer(reply))
    if bold and all(b.group(0) in kb for b in bold):
        for b in bold:
            line_start = reply.rfind("\n", 0, b.start()) + 1
            if reply[line_start : b.start()].strip() and b.group(0).rstrip("*").endswith(":"):
                found.append((b.start(), b.start() + 2, "**", "a KB heading pasted into a line"))
    for line_match in re.finditer(r"[^\n]+", reply):
        marks = [m for m in emphasis if line_match.start() <= m.start() < line_match.end()]
        if len(marks) % 2:  # unbalanced: one of them is debris
            for mark in marks:
                if _kb_has(kb, mark.group(0), reply, mark.start(), mark.end()):
                    found.append((mark.start(), mark.end(), mark.group(0), "stray emphasis markup"))
                    break
    for pattern, label in ((_STRAY_HEADING, "a heading mark"), (_STRAY_BULLET, "a bullet")):
        for match in pattern.finditer(reply):
            token = match.group(1)
            if _kb_has(kb, token, reply, match.start(1), match.end(1)):
                found.append((match.start(1), match.end(1), token, f"{label} inside a line"))
    for line_match in re.finditer(r"[^\n]+", reply):
        line = line_match.group(0)
        cells = list(_CELL.finditer(line))
        ruled = any(
            label == "a table rule" and line_match.start() <= start < line_match.end()
            for start, _, _, label in found
        )
        if len(cells) >= 2 and not line.lstrip().startswith("|") and not ruled:
            cell = cells[0]
            bar = line_match.start() + cell.start() + cell.group(0).index("|")
            if _kb_has(kb, "|", reply, bar, bar + 1):
                found.append((bar, bar + 1, "|", "table cells run into a sentence"))
    return found


# A token of letters and digits: "vehic1e", "tw0", "£6O", "l4", "6prn".
_MIXED = re.compile(r"(?<![\w@.])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{2,}(?![\w@])")
_READ_AS_LETTER = str.maketrans("01", "ol")
_READ_AS_DIGIT = str.maketrans("Ol", "01")


def _misread(token: str) -> str | None:
    """What a scanned token should have said, when a scanner evidently misread it: single
    digits among letters ("vehic1e" -> vehicle, "tw0" -> two), a letter O or l among digits
    ("6O" -> 60, "l4" -> 14), "prn"/"arn" after a time ("6prn" -> 6pm)."""
    digits = re.findall(r"\d+", token)
    letters = re.sub(r"\d", "", token)
    if all(len(d) == 1 and d in "01" for d in digits) and len(letters) >= 2:
        word = token.translate(_READ_AS_LETTER)
        if word.isalpha() and frequency(word) >= EVERYDAY:
            return word
    if re.fullmatch(r"\d+O\d*|l\d+", token):
        return token.translate(_READ_AS_DIGIT)
    m = re.fullmatch(r"(\d{1,2})(prn|arn)", token, re.IGNORECASE)
    if m:
        return m.group(1) + m.group(2)[0] + "m"
    return None


def ocr_spans(reply: str, kb: str) -> list[tuple[int, int, str, str]]:
    """(start, end, token, what it should say) for scanning garble the reply copies from the KB."""
    kb_tokens = {m.group(0) for m in _MIXED.finditer(kb)}
    found = []
    for m in _MIXED.finditer(reply):
        meant = _misread(m.group(0)) if m.group(0) in kb_tokens else None
        if meant:
            found.append((m.start(), m.end(), m.group(0), meant))
    return found
