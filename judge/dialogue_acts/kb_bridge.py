"""A reply that answers in the words of the KB line on the question's topic (a retrieval
bot answers in the KB's words, not the customer's)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from judge.dialogue_acts.customer_questions import Question
from judge.dialogue_acts.expectations import EXPECTS
from judge.dialogue_acts.reply_acts import statements
from judge.dialogue_acts.vocabulary import STOP, content_words, meet, stem
from judge.text import words

KbLines = tuple[tuple[str, ...], ...]
_KB_LINE = re.compile(r"\n+|(?<=[.!?])\s+|\s*(?:<br\s*/?>|\|)\s*", re.IGNORECASE)
_BRIDGE_WORDS = 2
_BRIDGE_REACH = 6  # content words either side of the topic word in the KB line


@functools.lru_cache(maxsize=256)
def kb_lines(kb: str) -> KbLines:
    """The stemmed content words, in order, of each line (sentence, table cell) of a KB."""
    found = (
        tuple(stem(w) for w in words(line) if w not in STOP and not w.isdigit())
        for line in _KB_LINE.split(kb)
    )
    return tuple(line for line in found if line)


def documents_lines(texts: Iterable[str]) -> KbLines:
    """`kb_lines` of a fixture's documents (their texts, without the titles: a title names a
    document's topic, not what it says)."""
    return kb_lines("\n".join(texts))


def bridged(reply: str, question: Question, kb: KbLines) -> bool:
    """The reply says what the KB says about the question's topic: near a topic word of the
    question in a KB line, at least two other words of that line are in the reply ("what are
    the password rules?" -> "Min 12 characters, with 1 number", the KB's "Password rules: min
    12 characters, 1 number, 1 symbol"). A retrieval bot answers in the KB's words, not the
    customer's. Only what the reply states counts, and not for a question that asks for a kind
    of fact (how much, how long, when ...): the fact itself answers those."""
    if not kb or not question.topic or any(e[0].search(question.sentence.text) for e in EXPECTS):
        return False
    said = frozenset().union(*(content_words(s.text) for s in statements(reply)))
    if not said:
        return False  # a reply that only asks the next question says nothing from the KB
    for line in kb:
        for at, word in enumerate(line):
            if not meet(question.topic, frozenset({word})):
                continue
            near = frozenset(line[max(0, at - _BRIDGE_REACH) : at + _BRIDGE_REACH + 1])
            if len(meet(near - question.topic, said)) >= _BRIDGE_WORDS:
                return True
    return False
