"""Telling a misspelt word from a real one: the words of a text, one-edit variants, accepted
spelling variants, edits that look like slips, and what a case's own words say (`Lexicon`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from generator.dates import MONTH_NAMES, WEEKDAY_NAMES
from judge.kb_noise.common_words import COMMON_WORDS
from judge.lexicon import EVERYDAY, clips, frequency

# A word only a few times in the KB, next to one at least this many times more frequent.
_MAX_TYPO_COUNT = 2
_MIN_FREQUENT = 3
_FREQUENCY_RATIO = 3
_MIN_TYPO_LENGTH = 4
_LONG_WORD = 8

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_WORD = re.compile(r"[A-Za-z]+")
# `\S+@\S+` matches a whole token from its start or nowhere in it, so it is tried at a token's
# start only, and reads the token once (issue 33: one long token was read once from each of its
# characters); a domain's label is read once from each word start, at most 63 characters.
_EMAIL_OR_URL = re.compile(
    r"(?<!\S)\S[^\s@]*+@\S++|\bhttps?://\S++|\bwww\.\S++|\b[\w-]{1,63}+\.(?:com|ie|org|net|eu)\b"
)
# A capital right after one of these (or at a line start) may be a sentence start, not a name.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n#|•*>\-(\"]\s*)$")


def strip_addresses(text: str) -> str:
    """`text` with emails and URLs blanked (same length, so offsets still hold)."""
    return _EMAIL_OR_URL.sub(lambda m: " " * len(m.group(0)), text)


def plain_words(text: str) -> list[str]:
    """The words of `text`, casefolded, emails and URLs left out."""
    return [w.casefold() for w in _WORD.findall(strip_addresses(text))]


def _edits(word: str) -> Iterator[tuple[str, int, str]]:
    """(variant, position, operation) for every variant one edit from `word`."""
    for i in range(len(word)):
        yield word[:i] + word[i + 1 :], i, "delete"
    for i in range(len(word) - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2 :], i, "transpose"
    for i in range(len(word)):
        for c in _LETTERS:
            if c != word[i]:
                yield word[:i] + c + word[i + 1 :], i, "substitute"
    for i in range(len(word) + 1):
        for c in _LETTERS:
            yield word[:i] + c + word[i:], i, "insert"


_SAME_SOUND = ({"s", "z"}, {"c", "s"}, {"c", "k"}, {"y", "i"})


# travelling/traveling, cancelled, fulfill, skillful, installment: a doubled l before a suffix
# (or at the end) may be spelled single; "usualy" is no spelling of "usually".
_DOUBLED_L = re.compile(r"(?<!l)ll(?:ing|ed|er|ment|ful|ation|$)")


def _spelling_variant(word: str, other: str, position: int, operation: str) -> bool:
    """True when `word` and `other` (one edit apart) are two accepted spellings or forms:
    colour/color, centre/center, organise/organize, licence/license, tyre/tire,
    cancelled/canceled, fulfil/fulfill, ageing/aging, anaesthetic/anesthetic; or differ in the first or
    last letter only (plurals, -ed/-er, a different word altogether)."""
    if position == 0:
        return True
    last = max(len(word), len(other)) - 1
    if operation in ("delete", "insert") and position >= last:
        return True
    if operation == "substitute" and position == last:
        return True
    if operation == "transpose":
        # centre/center; prioritise is no slip of priorities.
        return position + 1 >= last and {word[-2:], other[-2:]} in ({"re", "er"}, {"se", "es"})
    longer = word if len(word) > len(other) else other
    if operation in ("delete", "insert"):
        extra = longer[position]
        before = longer[position - 1]
        after = longer[position + 1] if position + 1 < len(longer) else ""
        return (
            (extra == "u" and before == "o" and after == "r")
            or (extra == "l" and _DOUBLED_L.search(longer) is not None)
            or (extra in "ao" and after == "e")
            or (extra == "e" and after in "imy")
            or (extra == "i" and after == "u")
        )
    return {word[position], other[position]} in _SAME_SOUND


# Doubled letters English hardly uses: "reqquest", "emaiil" are typos, "dinner" is not.
_RARE_DOUBLES = frozenset("ahijkquvwxy")


def _bigrams(word: str) -> set[str]:
    padded = f"^{word}$"
    return {padded[i : i + 2] for i in range(len(padded) - 1)}


_VOWELS = frozenset("aeiouy")


def _typo_signature(word: str, position: int, operation: str) -> bool:
    """The edit is one real words rarely differ by: two inner letters swapped ("Colletc"), a
    letter tripled ("adddress"), a rare letter doubled ("reqquest"), or a consonant doubled
    next to another consonant ("aftter", "collecct"; but "address", "apply": before l or r)."""
    if operation == "transpose":
        return True
    if operation != "delete":
        return False
    letter = word[position]
    if word[position - 1] == letter:
        first = position - 1
    elif position + 1 < len(word) and word[position + 1] == letter:
        first = position
    else:
        return False
    if word[first : first + 3] == letter * 3 or letter in _RARE_DOUBLES:
        return True
    if letter in _VOWELS:
        return False
    before = word[first - 1] if first > 0 else "a"
    after = word[first + 2] if first + 2 < len(word) else "a"
    return before not in _VOWELS or (
        after not in _VOWELS and after not in "lr" and letter not in "ls"
    )


def may_be_typo(word: str, truth: frozenset[str]) -> bool:
    """`word` (casefolded) is long enough, and neither a common word, a ground-truth word nor
    an English word by the word list: what `Lexicon.correction` needs no KB counts to rule out."""
    return not (
        len(word) < _MIN_TYPO_LENGTH or word in COMMON_WORDS or word in truth or frequency(word)
    )


@dataclass(frozen=True)
class Lexicon:
    """What the case says about words: how often each occurs (in the KB; in all the case's
    text), which are names, which are ground truth, and the letter pairs real words use."""

    kb: Counter[str]
    counts: Counter[str]
    names: frozenset[str]
    truth: frozenset[str]

    @classmethod
    def build(cls, kb_text: str, other_text: str, truth: frozenset[str]) -> Lexicon:
        kb = Counter(plain_words(kb_text))
        counts = kb + Counter(plain_words(other_text))
        return cls(kb, counts, frozenset(_name_like(kb_text)), truth)

    @cached_property
    def pairs(self) -> frozenset[str]:
        """Letter pairs (with ^ and $ for the edges) of the words known to be spelt right."""
        known = COMMON_WORDS | self.truth | {w for w, n in self.counts.items() if n >= 3}
        return frozenset(pair for word in known for pair in _bigrams(word))

    def _likelier(self, other: str, word: str, odd: set[str]) -> bool:
        """`other` is the spelling and `word` the slip, going by how often the KB, then the whole
        case, writes each; on a tie, when only `word` has a letter pair no known word has."""
        for counts in (self.kb, self.counts):
            if counts[other] != counts[word]:
                return counts[other] > counts[word]
        return bool(odd - _bigrams(other)) and not (_bigrams(other) - self.pairs)

    def correction(self, word: str) -> str | None:
        """The real word `word` misspells, or None when it is (or may be) a word itself."""
        if (
            not may_be_typo(word, self.truth)
            or self.kb[word] == 0
            or self.kb[word] > _MAX_TYPO_COUNT
        ):
            return None
        if word in self.names:
            # A capitalised word is a name, unless it misspells a day or month ("Satruday").
            fix = _everyday_fix(word)
            return fix if fix in _CAPITALISED else None
        odd = _bigrams(word) - self.pairs
        best: tuple[int, str] | None = None
        for other, position, operation in _edits(word):
            if len(other) < _MIN_TYPO_LENGTH or _spelling_variant(word, other, position, operation):
                continue
            known = other in COMMON_WORDS or other in self.truth
            if other in self.names or not (known or self.counts[other]):
                continue
            if _typo_signature(word, position, operation):
                # A swap or a tripled letter rarely makes a real word: the right spelling
                # written more often than the typo (or as often, when only the typo has a
                # letter pair no known word has) is enough.
                if not (known or self._likelier(other, word, odd)):
                    continue
            elif len(word) >= _LONG_WORD and operation == "insert":
                # A long word missing a letter of a known word ("apointments", "Vaccinaton")
                # is rarely a word itself: short ones are (list/lit, scale/sale).
                pass
            elif not odd - _bigrams(other):
                # Any other edit (a letter dropped, added or changed) turns real words into
                # real words too (list/lift, sale/scale): it counts only when it makes a letter
                # pair no known word has ("poliy") ...
                continue
            elif other not in self.truth and self.counts[other] < max(
                _MIN_FREQUENT, _FREQUENCY_RATIO * self.kb[word]
            ):
                # ... and the right spelling is a ground-truth word or a clearly more frequent
                # word of the case (a common word alone is not enough: tyre/type, lyre/lure).
                continue
            rank = self.counts[other] + (1000 if known else 0)
            if best is None or rank > best[0]:
                best = (rank, other)
        return best[1] if best else _everyday_fix(word)


# Weekday and month names (not "May", also an everyday word).
_CAPITALISED = frozenset(n.casefold() for n in (*WEEKDAY_NAMES, *MONTH_NAMES)) - {"may"}
# What scanning does to letters: "rn" read for "m" ("4-6prn"), "cl" for "d", "vv" for "w".
_OCR_CONFUSIONS = (("rn", "m"), ("m", "rn"), ("cl", "d"), ("vv", "w"))


def _ocr_variants(word: str) -> Iterator[str]:
    for seen, meant in _OCR_CONFUSIONS:
        at = word.find(seen)
        while at >= 0:
            yield word[:at] + meant + word[at + len(seen) :]
            at = word.find(seen, at + 1)


def _everyday_fix(word: str) -> str | None:
    """The everyday English word (by the word list) that `word`, itself not a word, misspells
    by one edit or one scanning confusion; None when there is none or `word` is short."""
    if len(word) <= _MIN_TYPO_LENGTH or frequency(word) or clips(word):
        return None
    candidates = [
        other
        for other, position, operation in _edits(word)
        if not _spelling_variant(word, other, position, operation)
    ]
    counted = [(frequency(o), o) for o in (*candidates, *_ocr_variants(word))]
    best = max((c for c in counted if c[0] >= EVERYDAY), key=lambda c: c[0], default=None)
    return best[1] if best else None


def _name_like(text: str) -> set[str]:
    """Casefolded words `text` writes with a capital inside a sentence (or mixed case: iPhone)."""
    names: set[str] = set()
    lower: set[str] = set()
    clean = strip_addresses(text)
    for match in _WORD.finditer(clean):
        word = match.group(0)
        folded = word.casefold()
        if word.islower():
            lower.add(folded)
        elif word.isupper():
            continue
        elif not word[1:].islower() or not _SENTENCE_START.search(clean[: match.start()][-8:]):
            names.add(folded)
    return names - lower


def word_spans(text: str) -> Iterator[re.Match[str]]:
    """Each word of `text` with its position, emails and URLs left out."""
    return _WORD.finditer(strip_addresses(text))
