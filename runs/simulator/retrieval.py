"""Retrieval over a case's fixture KB: passages, BM25 ranking and the KB's vocabulary.

Two things a customer must never be shown come from here too: text written for staff or the
bot rather than for customers (`is_internal`, `is_directive`: the team's working instructions,
internal emails, shift handovers, booking checklists, "Collect full name ...", "Offer an
emergency appointment ..."), and the KB's typos (`KbIndex.repair`: a word that is one typing
slip away from a more frequent word of the same KB is written as that word, so "Cusom sports
mouthguard" is quoted as "Custom sports mouthguard" when the KB spells it right elsewhere).
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import math
import re
from collections import Counter, OrderedDict
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
    """Stemmed words that carry meaning (stop words are dropped before stemming, so "does"
    does not survive as "doe")."""
    raw = _WORD.findall(text.casefold())
    return [stem(w) for w in raw if w not in STOPWORDS and stem(w) not in STOPWORDS and len(w) > 1]


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


_INTERNAL_TITLE = re.compile(
    r"guideline|instruction|internal|hand-?over|\bstaff|\bteam\b|checklist|procedure|script|"
    r"training|memo|front desk|reception notes|playbook|how we work",
    re.IGNORECASE,
)
# Verbs that open an instruction to staff or to the bot ("Collect ...", "Offer ...",
# "Quote only ..."); a customer-facing line rarely starts with one.
_DIRECTIVE_VERBS = frozenset(
    [
        "collect",
        "ask",
        "offer",
        "quote",
        "remind",
        "ensure",
        "say",
        "mention",
        "explain",
        "avoid",
        "escalate",
        "capture",
        "record",
        "log",
        "refer",
        "greet",
        "verify",
        "inform",
        "recommend",
        "suggest",
        "apologise",
        "apologize",
        "redirect",
        "transfer",
        "handle",
        "answer",
        "respond",
        "reply",
        "confirm",
        "direct",
    ]
)
_DIRECTIVE_LEAD = frozenset(["always", "never", "only", "don't", "dont"])
_SOFT_LEAD = frozenset(["please", "also", "and", "then", "kindly"])
_ABOUT_THE_BOT = re.compile(
    r"\b(?:the|our|this) (?:assistant|chatbot|chat bot|bot|agent|ai)\b|\bstaff (?:must|should)\b|"
    r"\b(?:remind|tell|ask) (?:people|customers|patients|clients)\b",
    re.IGNORECASE,
)
_LETTERS = re.compile(r"[a-z']+")
_BOTS = ("assistant", "chatbot")
_TO_THE_CUSTOMER = frozenset(["you", "your", "yours", "you're", "us"])


def is_internal(passage: Passage) -> bool:
    """A passage of a document written for staff (guidelines, internal email, handover notes)."""
    return bool(_INTERNAL_TITLE.search(passage.title))


def is_directive(sentence: str) -> bool:
    """An instruction meant for staff or the bot, not information for a customer: it talks
    about the assistant ("The assistant never diagnoses ...") or, without speaking to the
    customer ("you", "us"), opens with an instruction verb ("Collect full name ...", "Please
    also remind people ...", "Never diagnose."), typos and all ("Colect", "Ofer")."""
    if _ABOUT_THE_BOT.search(sentence):
        return True
    tokens = _LETTERS.findall(sentence.casefold())
    for before, word in itertools.pairwise(tokens):
        if before in ("the", "our", "this") and difflib.get_close_matches(word, _BOTS, 1, 0.8):
            return True  # "the assisstant never diagnoses ..."
    if _TO_THE_CUSTOMER & set(tokens):
        return False  # "Please give at least 24 hours notice if you cannot attend."
    while tokens and tokens[0] in _SOFT_LEAD:
        tokens = tokens[1:]
    if not tokens:
        return False
    first = tokens[0]
    if first in _DIRECTIVE_LEAD or (first == "do" and tokens[1:2] == ["not"]):
        return True
    if first in _DIRECTIVE_VERBS:
        return True
    return len(first) >= 4 and bool(difflib.get_close_matches(first, _DIRECTIVE_VERBS, 1, 0.8))


def _one_slip(typo: str, word: str) -> bool:
    """Is `typo` `word` with one typing slip inside it (two letters swapped, one dropped,
    doubled or hit next to it), never a different ending ("fillings" is not a slip of
    "filling")? The first letter is never touched."""
    if typo == word or typo[:1] != word[:1]:
        return False
    if len(typo) == len(word):
        diff = [i for i, (a, b) in enumerate(zip(typo, word, strict=True)) if a != b]
        if len(diff) == 2 and diff[1] == diff[0] + 1:
            i, j = diff
            return typo[i] == word[j] and typo[j] == word[i]
        return len(diff) == 1 and diff[0] < len(word) - 1
    short, long = (typo, word) if len(typo) < len(word) else (word, typo)
    if len(long) - len(short) != 1:
        return False
    # The last letter is never dropped or doubled.
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long) - 1))


class KbIndex:
    """BM25 over the passages of one KB; built once per distinct KB and reused across turns."""

    def __init__(self, kb: tuple[KbEntry, ...]) -> None:
        self.passages = [p for entry in kb for p in _passages_of(entry)]
        # Words counted once per distinct line of a document: a paragraph repeated within a
        # document repeats its typos too, the same sentence in two documents is two sources.
        lines = {
            (entry.id, " ".join(line.split()).casefold())
            for entry in kb
            for line in [entry.title, *entry.text.splitlines()]
        }
        self.word_counts = Counter(w for _, line in lines for w in _LETTERS.findall(line))
        self._pairs: Counter[str] = Counter()
        for w, n in self.word_counts.items():
            padded = f"^{w}$"
            for i in range(len(padded) - 1):
                self._pairs[padded[i : i + 2]] += n
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

    def related(self, word: str) -> list[str]:
        """Other KB words of the same family as `word` ("diagnosis" -> "diagnose"): the same
        first six letters."""
        if len(word) < 6:
            return []
        return [v for v in self._near(word) if v[:6] == word[:6] and v != word][:4]

    def _near(self, word: str) -> list[str]:
        return [v for v in self._sorted_vocabulary if v[:1] == word[:1]]

    def spelling(self, word: str) -> str:
        """The KB's own spelling of `word` when `word` is a typing slip of another word of the
        KB: one that the KB uses at least as often and that reads more like the rest of the
        KB's text (letter pairs such as "ae" in "braething" are rare in it)."""
        lower = word.casefold()
        if len(lower) < 4 or not lower.isalpha():
            return word
        count = self.word_counts.get(lower, 0)
        own = self._plausibility(lower)
        better = [
            (n, self._plausibility(v), v)
            for v, n in self.word_counts.items()
            # Noise misspells words of five letters or more; "form" is no slip of "from".
            if len(v) >= 5 and n >= count and v.isalpha() and _one_slip(lower, v)
        ]
        better = [b for b in better if b[0] >= 2 * count or (b[0] > count and b[1] > own)]
        if not better:
            return word
        fixed = max(better)[2]
        if word.isupper():
            return fixed.upper()
        return fixed.capitalize() if word[:1].isupper() else fixed

    def _plausibility(self, word: str) -> float:
        """Mean log-frequency in this KB of the word's letter pairs (with its edges)."""
        padded = f"^{word}$"
        pairs = [padded[i : i + 2] for i in range(len(padded) - 1)]
        return sum(math.log(self._pairs.get(p, 0) + 1) for p in pairs) / len(pairs)

    def repair(self, text: str) -> str:
        """`text` with the KB's typing slips written the way the KB usually spells the word."""
        return re.sub(r"[A-Za-z]{4,}", lambda m: self.spelling(m.group(0)), text)


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
