"""What a customer turn asks and whether a reply takes it up: shared by `ignored_question` and
`irrelevant_reply`.

Deliberately lexical and conservative: a reply counts as taking a question up when it answers
with the kind of fact the question asks for (a price for "how much", a time for "when"), when
it shares the question's content words, when it answers yes or no, asks back to clarify, or
declines honestly. Only a reply that does none of these is treated as not addressing it.

The package: `vocabulary` (stems, content words, typing slips), `customer_questions` (what a
customer turn asks), `expectations` (the kind of fact a question asks for), `reply_acts` (what a
reply does: states, proceeds, declines, clarifies, takes a position), `kb_bridge` (a reply in the
KB's words) and `take_up` (whether a reply takes a question up).
"""

from __future__ import annotations

from judge.dialogue_acts.customer_questions import Question, clauses, questions
from judge.dialogue_acts.kb_bridge import KbLines, bridged, documents_lines, kb_lines
from judge.dialogue_acts.reply_acts import (
    ACCEPTS,
    ASKS,
    ASKS_WITHIN,
    PLEASE_ASK,
    clarifies,
    declines,
    proceeds,
    stances,
    statements,
)
from judge.dialogue_acts.take_up import answers, left_open, takes_up
from judge.dialogue_acts.vocabulary import (
    STOP,
    content_words,
    kindred,
    meet,
    stem,
    topic_words,
    typo_of,
)

__all__ = [
    "ACCEPTS",
    "ASKS",
    "ASKS_WITHIN",
    "PLEASE_ASK",
    "STOP",
    "KbLines",
    "Question",
    "answers",
    "bridged",
    "clarifies",
    "clauses",
    "content_words",
    "declines",
    "documents_lines",
    "kb_lines",
    "kindred",
    "left_open",
    "meet",
    "proceeds",
    "questions",
    "stances",
    "statements",
    "stem",
    "takes_up",
    "topic_words",
    "typo_of",
]
