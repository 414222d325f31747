"""Retrieval over a case's fixture KB: passages, BM25 ranking and the KB's vocabulary."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass

from rank_bm25 import BM25Okapi

from runs.simulator.contract import KbEntry

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
# Lines of one passage: short enough to quote, long enough to keep a table row with its header.
PASSAGE_LINES = 4
PASSAGE_CHARS = 500

_STOPWORD_TEXT = """
a about above after again all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself just let me more most my
no nor not now of off on once only or other our ours out over own please same she should so some
such than that the their theirs them then there these they this those through to too under until
up very was we were what when where which while who whom why will with would you your yours u ur
r im i'm hi hey hello thanks thank ok okay yes yeah yep pls want wanna like need tell know much
many long get got really soon ish thing something anything whenever dunno yet normal usual oops
sorry fine suggest recommend offer provide sell
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def stem(word: str) -> str:
    """A light plural stemmer, so "emergencies" finds "emergency" and "prices" finds "price"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.casefold())]


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


def _is_heading(lines: list[str]) -> bool:
    """A block that only names what follows ("## Fillings", "HYGIENE CLEAN:")."""
    if len(lines) > 2:
        return False
    return all(
        line.lstrip().startswith("#") or (len(line.split()) <= 5 and not re.search(r"\d", line))
        for line in lines
    )


def _passages_of(entry: KbEntry) -> list[Passage]:
    """Blocks between blank lines (a heading joined to the block under it), cut into pieces of
    at most PASSAGE_LINES lines."""
    out: list[Passage] = []
    heading: list[str] = []
    block: list[str] = []

    def flush() -> None:
        nonlocal heading
        if not block:
            return
        if _is_heading(block):
            if heading:  # two headings in a row: the first one stands alone
                out.append(Passage(entry.id, entry.title, "\n".join(heading)[:PASSAGE_CHARS]))
            heading = list(block)
            block.clear()
            return
        for start in range(0, len(block), PASSAGE_LINES):
            text = "\n".join([*heading, *block[start : start + PASSAGE_LINES]]).strip()
            out.append(Passage(entry.id, entry.title, text[:PASSAGE_CHARS]))
        heading = []
        block.clear()

    for line in entry.text.splitlines():
        if line.strip():
            block.append(line.rstrip())
        else:
            flush()
    flush()
    if heading:  # a short last paragraph ("Closed on Sunday.") is content, not a heading
        out.append(Passage(entry.id, entry.title, "\n".join(heading)[:PASSAGE_CHARS]))
    return out


class KbIndex:
    """BM25 over the passages of one KB; built once per distinct KB and reused across turns."""

    def __init__(self, kb: tuple[KbEntry, ...]) -> None:
        self.passages = [p for entry in kb for p in _passages_of(entry)]
        corpus = [words(f"{p.title} {p.text}") or ["_"] for p in self.passages]
        self.vocabulary = frozenset(w for doc in corpus for w in doc)
        self._sorted_vocabulary = sorted(self.vocabulary)
        self._bm25 = BM25Okapi(corpus) if corpus else None

    def search(self, query: str, *, k: int = 3) -> list[tuple[float, Passage]]:
        terms = content_words(query)
        if not terms or self._bm25 is None:
            return []
        scores = self._bm25.get_scores(terms)
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        out: list[tuple[float, Passage]] = []
        seen: set[str] = set()
        for i in ranked:
            if scores[i] <= 0 or len(out) == k:
                break
            if self.passages[i].text not in seen:  # repeated paragraphs retrieve once
                seen.add(self.passages[i].text)
                out.append((float(scores[i]), self.passages[i]))
        return out

    def knows(self, word: str) -> bool:
        """True when the KB has the word, or one close to it (a typo of the customer's)."""
        if word in self.vocabulary or word.isdigit():
            return True
        if len(word) >= 5 and any(v.startswith(word[:5]) for v in self._near(word)):
            return True
        return bool(difflib.get_close_matches(word, self._near(word), n=1, cutoff=0.8))

    def _near(self, word: str) -> list[str]:
        return [v for v in self._sorted_vocabulary if v[:1] == word[:1]]


def _kb_key(kb: list[KbEntry]) -> str:
    digest = hashlib.sha256()
    for entry in kb:
        digest.update(f"{entry.id}\0{entry.title}\0{entry.text}\0".encode())
    return digest.hexdigest()


_INDEXES: OrderedDict[str, KbIndex] = OrderedDict()
_MAX_INDEXES = 32


def kb_index(kb: list[KbEntry]) -> KbIndex:
    """The index of `kb`, built once per distinct KB content (a case's turns share one)."""
    key = _kb_key(kb)
    index = _INDEXES.get(key)
    if index is None:
        index = _INDEXES[key] = KbIndex(tuple(kb))
        while len(_INDEXES) > _MAX_INDEXES:
            _INDEXES.popitem(last=False)
    else:
        _INDEXES.move_to_end(key)
    return index
