"""Answering from the KB: the passages retrieved for each clause of a question, the line quoted
for each, a follow-up about the policy just quoted, and an honest decline worded for the
question asked."""

from __future__ import annotations

import re
from dataclasses import dataclass

from runs.simulator.contract import ResponderRequest
from runs.simulator.extraction import extract_fields
from runs.simulator.reference.booking import suggest_services
from runs.simulator.reference.kb_text import (
    DAY_NAMES,
    as_sentence,
    best_lines,
    clean_line,
    days_covered,
    line_pieces,
    reflow,
    unknown_terms,
)
from runs.simulator.reference.questions import SUGGEST, info_questions, question_topic
from runs.simulator.retrieval import KbIndex, Passage, content_words, is_directive, is_internal

_FOLLOW_UP = re.compile(
    r"\b(?:does|do|would|will|is|can)\s+(?:that|this|it|the same|the policy)\s+(?:\w+\s+){0,2}?"
    r"(?:apply|applies|count|cover|include|go|hold|work)\b",
    re.IGNORECASE,
)
_POLICY_TOPIC = re.compile(r"polic|\brules?\b|cancel|terms|conditions", re.IGNORECASE)
_PRICE_ASKED = re.compile(r"how much|\bcost|\bprice|\bcharge|\bfee\b", re.IGNORECASE)
_EXISTS_QUESTION = re.compile(r"\b(is|are) there\b", re.IGNORECASE)
_REFERS_BACK = re.compile(r"\b(?:it|that|them|those)\b", re.IGNORECASE)
_DECLINED = re.compile(r"can't find anything about (?P<topic>.+?) in our information")
_EXPANSIONS = (
    (re.compile(r"how much|cost|price|charge", re.I), "price eur euro"),
    (re.compile(r"how long|duration|take\b", re.I), "minutes min takes"),
    (
        re.compile(r"\bopen\b|opening|\bclose|until|till|what time", re.I),
        "hours open opening closed",
    ),
    (re.compile(r"cancel", re.I), "cancelled cancellation notice fee"),
    (re.compile(r"pay|card|cash", re.I), "payment card cash"),
)
_CLAUSE_SPLIT = re.compile(
    r"\?|;|,\s*(?:and|but)\s+|\s+and\s+(?=(?:r|are|is|do|does|what|when|how|can)\b)"
)
MAX_CLAUSES = 3
PASSAGES_PER_CLAUSE = 2


def _expansions(text: str, index: KbIndex | None = None) -> list[str]:
    """Words to add to a query: what a kind of question looks for ("how much" -> price, eur),
    and the KB's own words of the same family as the ones asked with."""
    out = [words for pattern, words in _EXPANSIONS if pattern.search(text)]
    if index is not None:
        out += [w for word in content_words(text) for w in index.related(word)]
    return out


def _clauses(
    index: KbIndex, text: str, customer: list[str], services: list[str]
) -> list[tuple[str, str]]:
    """The clauses of a question as (clause, query); a short follow-up ("and how long does that
    take?") borrows the service last named in the conversation, or the previous message."""
    pieces = [p for p in _CLAUSE_SPLIT.split(text) if content_words(p)] or [text]
    named = [s for m in customer for s in services if s.casefold() in m.casefold()]
    context = named[-1] if named else (customer[-2] if len(customer) > 1 else "")
    queries = []
    for piece in pieces[:MAX_CLAUSES]:
        query = piece
        if len(content_words(piece)) < 3 and not any(
            s.casefold() in piece.casefold() for s in services
        ):
            query = f"{context} {piece}"
        queries.append((piece, " ".join([query, *_expansions(piece, index)])))
    return queries


@dataclass(frozen=True)
class Retrieved:
    clause: str
    query: str
    subject: str  # the service the clause is about, if any
    passages: list[Passage]


def search_kb(index: KbIndex, query: str, k: int) -> list[Passage]:
    """The `k` best passages for `query` that are written for customers (never the team's
    guidelines, internal emails or handover notes)."""
    hits = [p for _, p in index.search(query, k=k + 6)]
    return [p for p in hits if not is_internal(p) and _speaks_to_customers(p)][:k]


def _speaks_to_customers(passage: Passage) -> bool:
    """Has the passage a line a customer may be told (not only an FAQ's question and an
    instruction for the bot)?"""
    for raw in reflow(passage.text):
        if raw.lstrip().startswith("#"):
            continue
        for piece in line_pieces(raw):
            if piece and "?" not in piece and not is_directive(piece):
                return True
    return False


def retrieve(
    index: KbIndex, customer: list[str], question: str, services: list[str]
) -> list[Retrieved]:
    """Per clause of `question`: its query, its subject and its best passages."""
    out = []
    for clause, query in _clauses(index, question, customer, services):
        named = [s for s in services if s.casefold() in query.casefold()]
        hits = search_kb(index, query, PASSAGES_PER_CLAUSE)
        out.append(Retrieved(clause, query, max(named, key=len) if named else "", hits))
    return out


_HOURS_QUESTION = re.compile(r"\bopen|\bclose|hours|until|till|what time", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}[:.]\d{2}\b")


def _hours_line(index: KbIndex, clause: str) -> str | None:
    """For "are you open on Tuesday?": the KB line that gives that day's hours (or says it is
    closed), whatever its format ("Mon-Thu: 08:30 to 18:00", "Closed on Sunday.")."""
    if not _HOURS_QUESTION.search(clause):
        return None
    asked = [i for i, day in enumerate(DAY_NAMES) if day in clause.casefold()]
    if len(asked) != 1:
        return None
    candidates = []
    for order, passage in enumerate(index.passages):
        if is_internal(passage):
            continue
        for raw in reflow(passage.text):
            line = clean_line(raw)
            if asked[0] not in days_covered(line) or len(line) > 160:
                continue
            if _CLOCK.search(line) or "closed" in line.casefold():
                # Prefer a plain statement of that day's hours over a longer mention.
                candidates.append((len(days_covered(line)) > 1, len(line), order, line))
    if not candidates:
        return None
    return index.repair(as_sentence(min(candidates)[3]))


def _answer_lines(retrieved: list[Retrieved], index: KbIndex) -> list[str]:
    """One quoted line per clause, named after its subject when the line itself does not."""
    lines: list[str] = []
    hours_given = False
    for item in retrieved:
        hours = _hours_line(index, item.clause)
        if hours is not None:
            hours_given = True
            if hours not in lines:
                lines.append(hours)
            continue
        if hours_given and _HOURS_QUESTION.search(item.clause):
            continue  # "... and until what time?": the day's line above already says it
        primary = frozenset(
            content_words(" ".join([item.clause, *_expansions(item.clause, index)]))
        )
        best = best_lines(
            item.passages, item.query, primary=primary, subject=item.subject, relevant=True
        )
        if item.subject and not any(about for _, about in best):
            # Nothing retrieved speaks about the service asked about: look for it by name,
            # and never pass another line's figure off as this service's.
            more = search_kb(index, " ".join([item.subject, *_expansions(item.clause, index)]), 6)
            best = best_lines(
                [*more, *item.passages],
                item.query,
                primary=primary,
                subject=item.subject,
                relevant=True,
            )
            best = [(line, about) for line, about in best if about or not re.search(r"\d", line)]
        for line, about in best:
            line = index.repair(line)
            # Name the subject only for a line that is about it (under its heading); a line of
            # another service's section is never passed off as this one's.
            if about and item.subject.casefold() not in line.casefold():
                line = f"{item.subject}: {line}"
            if line not in lines:
                lines.append(line)
    return lines


def _decline(
    question: str,
    unknown: list[str],
    previous_reply: str,
    stated: dict[str, str],
    *,
    price: bool = False,
) -> str:
    """An honest "our information does not cover this", worded for the question asked."""
    topic, kind = question_topic(question)
    if topic and any(v and v.casefold() in topic.casefold() for v in stated.values()):
        topic = ""  # the customer's own details are not the subject
    declined = _DECLINED.search(previous_reply)
    if declined and kind in ("exists", "") and _REFERS_BACK.search(question):
        what = topic or "that"
        return (
            f"I'm sorry, I can't find {declined.group('topic')} in our information at all, so I "
            f"can't tell you about {what} for it either."
        )
    what = topic or " ".join(unknown[:3]) or "that"
    if kind == "offer":
        quote = " or quote a price" if price or _PRICE_ASKED.search(question) else ""
        return (
            f"I'm sorry, I can't find anything about {what} in our information, so I can't "
            f"confirm that we offer it{quote}."
        )
    if kind == "exists":
        plural = _EXISTS_QUESTION.search(question)
        whether = (
            "whether there are any"
            if plural and plural.group(1).casefold() == "are"
            else ("whether there is one")
        )
        return (
            f"I'm sorry, I can't find anything about {what} in our information, so I can't say "
            f"{whether}. If you like, I can pass the question on to the team."
        )
    return (
        f"I'm sorry, I can't find anything about {what} in our information. If you like, I can "
        "pass the question on to the team."
    )


def _follow_up(
    index: KbIndex, customer: list[str], question: str, services: list[str]
) -> str | None:
    """ "Does that also apply to <service>?" after a policy question: about that policy."""
    if len(customer) < 2 or not _FOLLOW_UP.search(question):
        return None
    earlier = next((m for m in reversed(customer[:-1]) if _POLICY_TOPIC.search(m)), None)
    if earlier is None:
        return None
    lines = [
        line
        for q in info_questions(earlier) or [earlier]
        for line in _answer_lines(retrieve(index, customer[:-1], q, services), index)
    ]
    if not lines:
        return None
    named = [s for s in services if s.casefold() in question.casefold()]
    what = max(named, key=len) if named else "that"
    # The policy as quoted, then a sentence naming the service without any figure (so no
    # price or duration is ever bound to the service).
    return (
        f"{lines[0]} I can't see any exception for {what} in our information, so that applies too."
    )


def answer_questions(
    request: ResponderRequest,
    index: KbIndex,
    customer: list[str],
    questions: list[str],
    services: list[str],
) -> list[str]:
    """One answer per question of the last message: the KB lines that answer it, or an
    honest decline that fits it."""
    previous = [m.content for m in request.messages if m.role == "assistant"]
    previous_reply = previous[-1] if previous else ""
    parts: list[str] = []
    declined = False
    for question in questions:
        if declined and len(content_words(question)) < 3:
            continue  # "do u do X? how much?": the decline of X answers the rest too
        follow_up = _follow_up(index, customer, question, services)
        if follow_up:
            parts.append(follow_up)
            continue
        stated = extract_fields(request.intake_fields, [question], services)
        topic, kind = question_topic(question)
        exact = kind in ("offer", "exists")
        unknown = unknown_terms(index, topic or question, services, stated, exact=exact)
        lines = [] if unknown and kind in ("offer", "exists") else None
        if lines is None:
            lines = _answer_lines(retrieve(index, customer, question, services), index)
        if lines:
            parts += [line for line in lines if line not in parts]
        elif SUGGEST.search(question) or re.search(r"what do (?:you|u) (?:do|offer)", question):
            parts.append(suggest_services(services))
        else:
            price = bool(_PRICE_ASKED.search(" ".join(questions)))
            parts.append(_decline(question, unknown, previous_reply, stated, price=price))
            declined = True
    return parts
