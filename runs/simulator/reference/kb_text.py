"""Reading the KB's own text: its lines and sentences cleaned for quoting, the lines that best
answer a query, the service names its price lines spell, the weekdays a line covers, and the
words of a question it never uses."""

from __future__ import annotations

import re

from runs.simulator.retrieval import KbIndex, Passage, content_words, is_directive, is_internal

_TOPIC_FILLER = frozenset(["anywhere", "somewhere", "place", "way", "option", "possibility"])
_CELL_SEPARATORS = re.compile(r"\s*\|\s*")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)]|#+)\s*")
# Not after an abbreviation an org writes prices and durations with ("1 Std. 30 Min.", "ca. 90 €",
# "Fr. 45.-", "approx. 40 min").
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bStd\.)(?<!\bMin\.)(?<!\bca\.)(?<!\bFr\.)(?<!\bapprox\.)(?<!\binkl\.)"
    r"\s+(?=[A-Z0-9€$£+])"
)
_MONEY_LINE = re.compile(
    r"\d+(?:[.,]\d{2})?\s*(?:€|eur|euro|usd|\$|£|gbp|chf)|(?:€|\$|£)\s*\d|"
    r"\b(?:eur|usd|gbp|chf)\s*\d",
    re.I,
)
_QA_PREFIX = re.compile(r"^(?:Q|A|Answer|Question)\s*[:.)]\s*", re.IGNORECASE)
_HEADER = re.compile(r"^\s*(?:subject|from|to|cc|re|sent|date)\s*:", re.IGNORECASE)
_PRICE_START = re.compile(r"^\W{0,3}(?:€|eur|euro|usd|gbp|chf|\$|£)?\s*\d", re.IGNORECASE)
# Two table rows or list items run together by noise ("... 30 min Hygiene clean - 80 EUR").
_ROW_SPLIT = re.compile(r"(?<=\bmin)\s+(?=[A-Z])|(?<=\))\s+(?=[A-Z])")
# "Check-up and exam costs 65 EUR and takes about 30 minutes."
_PRICE_PROSE = re.compile(
    r"^(?P<name>[A-Z][\w' -]{2,58}?)\s+costs?\s+(?:€|eur\b|euro\b|usd\b|\$|£|gbp\b|\d)", re.I
)
_NAME_SPLIT = re.compile(r"\s*(?:\||\s-\s|\s{2,}|:|\t|\.{2,}|–|—)\s*")
DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"
_DAY_RANGE = re.compile(rf"\b{_DAY}\s*(?:-|–|to|until|through)\s*{_DAY}", re.IGNORECASE)
_DAY_ONE = re.compile(rf"\b{_DAY}\b", re.IGNORECASE)


def _day_index(abbr: str) -> int:
    return [d[:3] for d in DAY_NAMES].index(abbr.casefold())


def days_covered(line: str) -> set[int]:
    """Weekdays (0 = Monday) a KB line speaks about: ranges ("Mon-Thu") and single days."""
    days: set[int] = set()
    for match in _DAY_RANGE.finditer(line):
        start, end = _day_index(match.group(1)), _day_index(match.group(2))
        days |= {(start + i) % 7 for i in range((end - start) % 7 + 1)}
    rest = _DAY_RANGE.sub(" ", line)
    days |= {_day_index(m.group(1)) for m in _DAY_ONE.finditer(rest)}
    return days


def service_names(index: KbIndex) -> list[str]:
    """Service names as the KB's price lines spell them ("Hygiene clean | 80 EUR | 45 min",
    "Hygiene clean costs 80 EUR ..."), rows run together by noise taken apart."""
    names: dict[str, str] = {}
    lines = [
        piece
        for passage in index.passages
        for line in passage.text.splitlines()
        for piece in _ROW_SPLIT.split(line)
    ]
    for line in lines:
        prose = _PRICE_PROSE.match(_BULLET.sub("", line.strip()))
        if prose:
            _add_name(names, prose.group("name"))
            continue
        if not _MONEY_LINE.search(line) or len(re.findall(r"\w:\s", line)) > 1:
            continue
        pieces = _NAME_SPLIT.split(_BULLET.sub("", line.strip(" |")), maxsplit=1)
        if len(pieces) < 2 or not _PRICE_START.match(pieces[1]):
            continue  # a price line starts with the name, then the price
        _add_name(names, pieces[0])
    return sorted(names.values(), key=str.casefold)


def _add_name(names: dict[str, str], head: str) -> None:
    head = re.sub(r"\s*\(.*?\)\s*", " ", head).strip(" -:,.")
    if (
        3 <= len(head) <= 60
        and head[:1].isalnum()
        and not re.search(r"\d|[()]", head)
        and len(head.split()) <= 6
    ):
        names.setdefault(head.casefold(), head)


def clean_line(line: str) -> str:
    """A KB line as a sentence: no list marker, no table bars, no stray bullet inside it
    (two list items merged into one line by noise)."""
    line = _QA_PREFIX.sub("", _BULLET.sub("", line.strip()))
    line = _CELL_SEPARATORS.sub(" - ", line.strip("| ")).strip(" -")
    line = re.sub(r"\s[*•]+\s", " ", line)
    return re.sub(r"\s+", " ", line)


def reflow(text: str) -> list[str]:
    """Lines of a passage, with a line broken mid-sentence joined to its continuation."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        continues = line[:1].islower() or (
            # "... less than" / "24 hours notice ...": a number carries the sentence on.
            line[:1].isdigit() and not _BULLET.match(line) and lines and lines[-1][-1:].islower()
        )
        if lines and continues and lines[-1][-1:] not in ".!?:|":
            lines[-1] = f"{lines[-1]} {line}"
        elif line:
            lines.append(line)
    return lines


def best_lines(
    passages: list[Passage],
    query: str,
    limit: int = 1,
    primary: frozenset[str] = frozenset(),
    subject: str = "",
    relevant: bool = False,
) -> list[tuple[str, bool]]:
    """The lines (or sentences) of the passages that share most content words with the query,
    each with whether it is about `subject` (names it, or sits under a heading naming it).

    Headings, e-mail headers and the FAQ's own questions never win; when the customer asks
    for a figure (price, duration, hours) a line holding one is preferred; when the question
    is about a service and some line is about it, only such lines are candidates (so "how long
    does a child check-up take?" is never answered with another service's duration). With
    `relevant`, a line must share a word with the question itself (`primary`), not only with
    the context it borrowed. Text for staff or the bot (internal documents, instructions such
    as "Collect full name ...") is never a candidate."""
    terms = set(content_words(query))
    wants_figure = any(w in terms for w in ("price", "minute", "hour"))
    wanted = subject.casefold()
    scored: list[tuple[int, int, str, bool]] = []
    order = 0
    for passage in passages:
        if is_internal(passage):
            continue
        heading = ""
        for raw in reflow(passage.text):
            if raw.lstrip().startswith("#"):
                heading = raw.casefold()
                continue
            if _HEADER.match(raw):
                continue
            for piece in line_pieces(raw):
                order += 1
                has_digit = bool(re.search(r"\d", piece))
                size = len([w for w in piece.split() if any(c.isalnum() for c in w)])
                if size < (3 if has_digit else 5) or "?" in piece or is_directive(piece):
                    continue
                piece_terms = set(content_words(piece))
                if relevant and primary and not primary & piece_terms:
                    continue
                overlap = len(terms & piece_terms) + len(primary & piece_terms)
                if wants_figure and has_digit:
                    overlap += 2
                about = bool(wanted) and (wanted in piece.casefold() or wanted in heading)
                if overlap:
                    scored.append((overlap, order, piece, about))
    if any(about for *_, about in scored):
        scored = [item for item in scored if item[3]]
    chosen: list[tuple[int, str, bool]] = []
    seen: set[str] = set()
    for _, position, piece, about in sorted(scored, key=lambda s: (-s[0], s[1])):
        if piece.casefold() in seen:
            continue
        seen.add(piece.casefold())
        chosen.append((position, piece, about))
        if len(chosen) == limit:
            break
    return [(as_sentence(p), about) for _, p, about in sorted(chosen)]


def line_pieces(raw: str) -> list[str]:
    """The sentences of a KB line, each cleaned ("Q: ... ? A: ..." merged by noise gives the
    question and the answer without its "A:"; two table rows run together give two rows)."""
    return [
        clean_line(piece)
        for row in _ROW_SPLIT.split(raw)
        for piece in _SENTENCE_END.split(clean_line(row))
        if piece.strip()
    ]


def as_sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else f"{text}."


def unknown_terms(
    index: KbIndex,
    text: str,
    services: list[str],
    stated: dict[str, str] | None = None,
    *,
    exact: bool = False,
) -> list[str]:
    """Words of the question the KB never uses: what the customer asks about that we lack.
    The customer's own details in the same message (a name, an e-mail) are not topics. With
    `exact` (the thing a customer asks whether we offer), a word must be the KB's own word or
    of its family, not merely start like one ("motorbike" is not "motor")."""
    known = {w for s in services for w in content_words(s)}
    known |= {w for value in (stated or {}).values() for w in content_words(value)}
    words = [w for w in content_words(text) if len(w) >= 4 and w not in known]
    words = [w for w in words if w not in _TOPIC_FILLER]
    if exact:
        return [w for w in words if w not in index.vocabulary and not index.related(w)]
    return [w for w in words if not index.knows(w)]
