"""Which clause pairs of the lexical path (`judge.contradiction`) may count as a reversal:
statements of something fixed, about the same subject, the negation on what they share."""

from __future__ import annotations

import re

from judge.contradiction import Clause, Pair, negation_near
from judge.support import stem as word_stem
from judge.support import tokens

_MAX_QUOTE = 240
# Statements whose truth depends on what the customer supplied or on the moment: look-ups,
# knowledge, availability. They may change between turns without a contradiction.
_SITUATIONAL_TEXT = re.compile(
    r"\b(?:find|found|locate|see|look(?:ed|ing)?\s+(?:up|into)|know|sure|information|info"
    r"|details|record|records|understand|available|availability|slots?|booked|fully|left"
    r"|remaining|spaces?|anymore|yet|currently|right now|today|tomorrow)\b",
    re.IGNORECASE,
)
# Words that name which case a statement is about: two statements with different ones ("for
# children" / "for adults", "on Monday" / "on Tuesday") are about different subjects.
_QUALIFIER_GROUPS = tuple(
    frozenset(word_stem(w) for w in tokens(group))
    for group in (
        "monday tuesday wednesday thursday friday saturday sunday weekday weekend weekdays "
        "weekends holiday holidays",
        "morning afternoon evening night lunchtime",
        "child children kid kids adult adults teen teens teenager teenagers senior seniors "
        "student students baby babies infant toddler",
        "new existing returning member members nonmember",
        "online phone email person chat website app post",
        "january february march april may june july august september october november december",
        "single double twin family suite",
        "small medium large",
        "dog dogs cat cats rabbit rabbits",
        "fixed variable flexible",
        "inside outside indoor outdoor",
    )
)
# Verbs a service statement is built around; they do not name its subject.
_SERVICE_VERBS = frozenset(
    word_stem(w)
    for w in tokens(
        "offer offers offered provide provides have has do does take takes accept accepts "
        "allow allows include includes included need needs require requires required cost costs "
        "charge charges welcome welcomed stock sell sells open opens closed book booked come"
    )
)
# Conditions and restrictions: "only for patients who ...", "not without a check-up".
# ("only $99" stresses a price; it restricts nothing.)
CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|in case|once|when you|as long as|otherwise|"
    # "only 2 left" or "£20 only" restricts a figure; "refunded as store credit only" another
    # thing of the sentence, not a condition on it.
    r"only(?!\s+(?:[$€£¥₹]|\d|chf|eur|usd|gbp|sek|kr\b)|\s*(?:[.,;!)]|$))|without|except"
    r"|apart from|other than)\b",
    re.IGNORECASE,
)


def comparable(clause: Clause) -> bool:
    """A clause that states something fixed: not a question, a condition or restriction (in
    its sentence), or a look-up."""
    text = clause.sentence
    return not (
        clause.question or CONDITIONAL.search(text) or _SITUATIONAL_TEXT.search(clause.text)
    )


def different_subjects(pair: Pair) -> bool:
    """The two clauses may be about different things: each names a case the other does not
    (a weekday, "children" / "adults" ...), or each has its own subject - a content word
    before the first shared one that is not a service verb ("the consultation is not included"
    / "the X-rays are included")."""
    later_only = pair.later.content - pair.shared
    earlier_only = pair.earlier.content - pair.shared
    for group in _QUALIFIER_GROUPS:
        if later_only & group and earlier_only & group:
            return True
    return bool(_subject(pair.later, pair.shared) and _subject(pair.earlier, pair.shared))


def negates_shared(pair: Pair) -> bool:
    """The negated clause of a negation flip negates a word the two clauses share."""
    negated = pair.earlier if pair.earlier.negated else pair.later
    return negation_near(negated.text, pair.shared)


def _subject(clause: Clause, shared: frozenset[str]) -> frozenset[str]:
    """Content stems of `clause` before its first shared one, service verbs left out."""
    out: set[str] = set()
    for word in tokens(clause.text):
        s = word_stem(word)
        if s in shared:
            break
        if s in clause.content and s not in _SERVICE_VERBS:
            out.add(s)
    return frozenset(out)


def quote_clause(clause: Clause) -> str:
    """A literal quote for `clause`: its sentence, or the clause itself when the sentence is
    long (cut at a word after _MAX_QUOTE characters)."""
    if len(clause.sentence) <= _MAX_QUOTE:
        return clause.sentence
    if len(clause.text) <= _MAX_QUOTE:
        return clause.text
    cut = clause.text[:_MAX_QUOTE]
    return cut[: cut.rfind(" ")] if " " in cut else cut
