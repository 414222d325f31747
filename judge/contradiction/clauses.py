"""Clauses of a text as the contradiction scorer reads them: content stems, negation and
stance of each, and whether two clauses hold antonyms."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from judge.contradiction.lexicons import (
    ANTONYMS,
    NEGATING_PHRASE,
    NEGATIONS,
    NEGATIVE,
    NEGATIVE_PREFIXES,
    NOT_NEGATING,
    POSITIVE,
    STOPWORDS,
)
from judge.support import stem, tokens

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(
    r",?\s+\b(?:but|though|although|however|whereas|except|and then|because|so)\b"
    r"|\s*[;:,]\s+",
    re.IGNORECASE,
)
_NEGATED_WORD = re.compile(r"n't$")


def is_negation(word: str) -> bool:
    """A negation word: "not", "never", "nothing", "don't" ..."""
    return word in NEGATIONS or bool(_NEGATED_WORD.search(word))


def split_words(text: str) -> list[str]:
    """The words of `text` (`judge.support.tokens`), accents and backticks read as apostrophes."""
    return tokens(text.replace("´", "'").replace("`", "'"))


def negation_near(text: str, shared: frozenset[str], window: int = 3) -> bool:
    """A negation of `text` stands within `window` words of one of the `shared` stems: it
    negates what the two clauses share ("there is no parking"), not something else ("... at no
    additional charge" beside "the Plus plan")."""
    words = split_words(text)
    negations = [i for i, w in enumerate(words) if is_negation(w)]
    subjects = [i for i, w in enumerate(words) if stem(w) in shared]
    return any(abs(i - j) <= window for i in negations for j in subjects)


@dataclass(frozen=True)
class Clause:
    """One clause of a text, with the sentence that contains it (a literal slice of the text)."""

    text: str
    sentence: str
    content: frozenset[str]  # content stems
    stems: frozenset[str]  # every stem
    words: frozenset[str]  # raw words of 3+ letters
    negated: bool
    stance: int  # -1, 0, 1
    question: bool

    @classmethod
    def of(cls, text: str, sentence: str) -> Clause:
        """The clause `text` of `sentence`."""
        words = split_words(text)
        stems = [stem(w) for w in words]
        polar = split_words(NOT_NEGATING.sub(" ", text))  # the words that may negate
        score = 0
        for i, s in enumerate(stem(w) for w in polar):
            value = (s in POSITIVE) - (s in NEGATIVE)
            if value and any(is_negation(w) for w in polar[max(0, i - 3) : i]):
                value = -value
            score += value
        return cls(
            text=text,
            sentence=sentence,
            content=frozenset(
                stem(w) for w in words if len(w) > 2 and w not in STOPWORDS and not is_negation(w)
            ),
            stems=frozenset(stems),
            words=frozenset(w for w in words if len(w) > 2),
            negated=any(is_negation(w) for w in polar) or bool(NEGATING_PHRASE.search(text)),
            stance=(score > 0) - (score < 0),
            question="?" in sentence,
        )


def sentences(text: str) -> list[str]:
    """Sentences of `text`, stripped, each a literal slice of it."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def clauses(text: str) -> list[Clause]:
    """The clauses of `text` (at least one when it has a word)."""
    return list(_clauses(text))


@functools.lru_cache(maxsize=4096)
def _clauses(text: str) -> tuple[Clause, ...]:
    """`clauses`, read once per text: a transcript compares each reply with every earlier one."""
    out: list[Clause] = []
    for sentence in sentences(text):
        for part in _CLAUSE.split(sentence):
            if part and re.search(r"\w", part):
                out.append(Clause.of(part.strip(), sentence))
    return tuple(out)


def has_antonym(a: Clause, b: Clause) -> bool:
    """`a` has a word whose antonym is in `b` (listed, or one is the other with a negative
    prefix: "known" / "unknown")."""
    if any(ANTONYMS.get(s, frozenset()) & b.stems for s in a.stems):
        return True
    for x in a.words:
        for y in b.words:
            short, long_ = (x, y) if len(x) < len(y) else (y, x)
            if len(short) >= 4 and any(long_ == p + short for p in NEGATIVE_PREFIXES):
                return True
    return False
