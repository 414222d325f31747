"""What the KB answers: the passage of a case's fixture (or the manifest entry) that answers a
customer's question or request, and whether a reply gives any of it. Read by `refused_request`.

A passage is one sentence or line of the fixture, or a heading and the sentence under it
("# Opening hours" / "Monday to Thursday: 8.30 to 18:00"); two sentences of prose are two
passages (a fact of one is not about the subject of the other). A question is answered by the
KB when:

- it asks about opening hours ("are you open on Friday?", "what time do you close?") and the KB
  has a passage stating a time beside a weekday or an open/close word (or the manifest lists
  hours), and whatever else it names is in that passage;
- it asks for a kind of fact (a price, a duration, a time: `dialogue_acts.EXPECTS`) about a
  subject, and one passage states a fact of that kind and names every subject word and every
  figure it names ("is it free at 62?" is not answered by "Eye test: free"), or a manifest
  service's name holds every subject word (for a price or a duration);
- it asks to book ("can I book a clean?", "I'd like an appointment on Friday"), the KB says how a
  booking is made (a passage about booking or appointments) or the manifest has intake fields,
  and whatever it asks to book is named in the KB or the manifest's services;
- it asks how to reach someone ("how do I contact support?"): as a fact question, for a phone,
  email or web address;
- any other question: one passage names every subject word and figure (and, for "where ...?",
  says where: a street, a floor, "next to" ...).

Subject words are the question's topic words (`dialogue_acts.topic_words`) less the words that
only say what kind of answer is wanted or qualify it (price, cost, long, open, book, normal,
usual ...) and, for a booking or hours question, the day and time words. Matching is by stem, a
word's kindred words (`dialogue_acts.kindred`), a compound's head of five letters or more
("tooth" in "tooth-coloured", but "pain" is not "painkiller") and typing slips
(`dialogue_acts.typo_of`). A question naming
something the KB never mentions (another business's service, a medicine, the customer's own
medical case) is therefore never answered by the KB. Facts are read with `judge.facts`.

A reply gives the KB's answer when it states a fact of the kind asked for or a fact of the
passage (a phone number answers "how do I contact you?", and a KB that takes bookings by phone),
or when, outside its refusing clauses (`judge.refusal.clauses`), it shares two or more of the
passage's own words (not the question's) or gets on with a booking (asks for the next detail,
restates it). A passage that itself declines or says what is not done (a policy: "We cannot
diagnose over chat or email.", "Never diagnose.") is answered by a reply that says no about what
was asked (a clause saying no and naming the question's subject), and its refusing clauses count
towards the shared words.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Literal

from generator.schemas import Manifest
from judge.dialogue_acts import (
    Question,
    content_words,
    kindred,
    meet,
    proceeds,
    stem,
    topic_words,
    typo_of,
)
from judge.dialogue_acts.customer_questions import SLOT_WORD
from judge.dialogue_acts.expectations import EXPECTS
from judge.facts import Fact, SupportIndex, extract_facts
from judge.refusal import THRESHOLD, clauses, negative, refusal_score
from judge.text import DAY_WORD, split_sentences, words

Source = Literal["fixture", "manifest"]
_WINDOW = 2
_PREFIX = 5
# "where is ...?" is answered by a place: a passage that says where something is.
_WHERE_ASK = re.compile(r"\bwhere(?:'s| is| are| do| can| should)?\b", re.I)
_PLACE = re.compile(
    r"\b(?:street|st|road|rd|avenue|ave|lane|floor|located|next to|near|nearest|opposite|behind|"
    r"beside|corner|upstairs|downstairs|entrance|building|room|car park|map|on the left|on the "
    r"right|inside|outside|across from|between|address|directions)\b",
    re.I,
)
# "how do I contact support?", "what's your number?": a way to reach someone answers it.
_CONTACT_ASK = re.compile(
    r"\b(?:contact|call|phone|ring|number|e-?mail|reach|website|speak to|talk to|get hold)\b",
    re.I,
)
_CONTACT_KINDS = frozenset({"phone", "email", "url"})
# A heading: "# Opening hours", "**Out of hours**", "Prices:".
_HEADING = re.compile(r"^\s*(?:#|\*\*[^*]+\*\*\s*$)|:\s*$")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)?(?![\d])")
_SHARED_WORDS = 2
# Words that only say what kind of answer is wanted, or qualify it, never what it is about.
_ASKING = frozenset(
    stem(w)
    for w in words(
        "price prices cost costs fee fees charge charges much long take takes taking time times "
        "open opens opening close closes closing closed hour hours when book booking booked "
        "appointment appointments appt reserve reservation schedule slot slots available "
        "availability come visit able possible"
        # Qualifiers that do not change what is meant: "the normal price of a check-up".
        " normal usual standard regular typical current basic general average exact total "
        "overall actual"
    )
)
_HOURS_ASK = re.compile(r"\b(?:open|opens|opening|close|closes|closing|closed|hours)\b", re.I)
_HOURS_WORD = re.compile(r"\b(?:open|opens|opening|close|closes|closed|hours|daily)\b", re.I)
_BOOKING_ASK = re.compile(
    r"\b(?:book|booking|appointment|appt|reserve|reservation|schedule|sign (?:me |us )?up|"
    r"come in|get (?:me |us )?in)\b",
    re.I,
)
# "I'd like an appointment", "we want to book", "need a slot on Friday": asks to book without
# the request form `Question.request` reads ("can I book ...?").
_WANTS_BOOKING = re.compile(
    r"\b(?:i|we)(?:'d| would)? (?:like|want|need|wanna|wish)\b[^.?!]{0,30}?\b(?:book|booking|"
    r"appointment|appt|reserve|reservation|slot)\b",
    re.I,
)
_BOOKING_STEMS = frozenset(stem(w) for w in words("book booking appointment reserve schedule"))
# A passage that says how a booking is made names what it needs or where it is made.
_HOW_TO_BOOK = frozenset(
    stem(w)
    for w in words("name phone number email date details online call ring website form confirm")
)
# Day, time and part-of-day words: when, not what.
_WHEN_WORDS = frozenset(
    stem(w)
    for w in words(
        "today tomorrow tonight weekend weekends morning afternoon evening night week next "
        "earliest latest soon asap now"
    )
)


@dataclass(frozen=True)
class Passage:
    """One or two consecutive sentences of the KB: their exact text, content words, facts."""

    text: str
    words: frozenset[str]
    kinds: frozenset[str]
    facts: tuple[Fact, ...]
    numbers: frozenset[str]


@dataclass(frozen=True)
class KbIndex:
    """The passages of a KB text and every content word it uses."""

    passages: tuple[Passage, ...]
    vocabulary: frozenset[str]


@dataclass(frozen=True)
class KbAnswer:
    """What answers one question: the question, the quote from its source, the passage's own
    words (those the question lacks), its facts, and the fact kinds the question wants."""

    question: Question
    source: Source
    quote: str
    words: frozenset[str]
    facts: tuple[Fact, ...]
    wanted: frozenset[str]
    booking: bool


@functools.lru_cache(maxsize=4)
def kb_index(kb_text: str, currency: str = "EUR") -> KbIndex:
    """The passages of `kb_text` (remembered for the last few KBs: a case's turns share one)."""
    sentences = split_sentences(kb_text)
    facts = extract_facts(kb_text, default_currency=currency, lenient=True)
    passages = []
    # Single sentences first: a question one sentence answers is quoted with that sentence.
    for size in range(1, _WINDOW + 1):
        for i in range(len(sentences) - size + 1):
            first, last = sentences[i], sentences[i + size - 1]
            if size > 1 and not _HEADING.search(first.text):
                continue  # two sentences of prose say two things
            inside = [f for f in facts if first.start <= f.start and f.end <= last.end]
            passages.append(
                Passage(
                    text=kb_text[first.start : last.end],
                    words=content_words(kb_text[first.start : last.end]),
                    kinds=frozenset(f.kind for f in inside),
                    facts=tuple(inside),
                    numbers=_numbers(kb_text[first.start : last.end]),
                )
            )
    return KbIndex(tuple(passages), content_words(kb_text))


def _same(a: str, b: str) -> bool:
    """One word, by stem, as a compound's head ("tooth" in "toothcolour", five letters or
    more: "pain" is not "painkiller") or with a typing slip."""
    if a == b or typo_of(a, b):
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= _PREFIX and long_.startswith(short)


def _numbers(text: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(text))


def _covered(word: str, found: frozenset[str]) -> bool:
    return any(_same(w, other) for w in kindred(frozenset({word})) for other in found)


def _all_named(subject: frozenset[str], found: frozenset[str]) -> bool:
    return all(_covered(word, found) for word in subject)


def _wanted(text: str) -> frozenset[str]:
    wanted = {k for pattern, kinds, _ in EXPECTS if pattern.search(text) for k in kinds}
    return frozenset(wanted | (_CONTACT_KINDS if _CONTACT_ASK.search(text) else set()))


def _subject(text: str, *, when_words: bool) -> frozenset[str]:
    found = topic_words(text) - _ASKING
    if when_words:
        found = frozenset(
            w for w in found if w not in _WHEN_WORDS and not SLOT_WORD.fullmatch(w)
        ) - {stem(m.group(0).casefold()) for m in DAY_WORD.finditer(text)}
    return found


def _answer(
    question: Question,
    passage: Passage,
    *,
    wanted: frozenset[str] = frozenset(),
    booking: bool = False,
) -> KbAnswer:
    return KbAnswer(
        question=question,
        source="fixture",
        quote=passage.text,
        words=frozenset(passage.words - content_words(question.sentence.text)),
        facts=passage.facts,
        wanted=wanted,
        booking=booking,
    )


def _from_manifest(question: Question, quote: str, wanted: frozenset[str]) -> KbAnswer:
    return KbAnswer(
        question=question,
        source="manifest",
        quote=quote,
        words=frozenset(content_words(quote) - content_words(question.sentence.text)),
        facts=(),
        wanted=wanted,
        booking=False,
    )


def _hours(question: Question, index: KbIndex, manifest: Manifest) -> KbAnswer | None:
    text = question.sentence.text
    rest = _subject(text, when_words=True)
    days = {m.group(0).casefold()[:3] for m in DAY_WORD.finditer(text)}
    best: Passage | None = None
    for passage in index.passages:
        if "time" not in passage.kinds or not (
            DAY_WORD.search(passage.text) or _HOURS_WORD.search(passage.text)
        ):
            continue
        if not _all_named(rest, passage.words):
            continue
        names_day = any(m.group(0).casefold()[:3] in days for m in DAY_WORD.finditer(passage.text))
        if best is None or names_day:
            best = passage
            if names_day:
                break
    if best is not None:
        return _answer(question, best, wanted=frozenset({"time"}))
    if manifest.hours and not rest:
        return _from_manifest(question, manifest.hours[0].days, frozenset({"time"}))
    return None


def _fact(
    question: Question, index: KbIndex, manifest: Manifest, wanted: frozenset[str]
) -> KbAnswer | None:
    subject = _subject(question.sentence.text, when_words=False)
    if not subject:
        return None  # "how much is it?": the KB cannot tell what is meant
    figures = _numbers(question.sentence.text)
    for passage in index.passages:
        if (
            passage.kinds & wanted
            and _all_named(subject, passage.words)
            and figures <= passage.numbers
        ):
            return _answer(question, passage, wanted=wanted)
    if wanted & {"money", "duration"} and not figures:
        for service in manifest.services:
            if _all_named(subject, content_words(service.name)):
                return _from_manifest(question, service.name, wanted)
    return None


def _booking(question: Question, index: KbIndex, manifest: Manifest) -> KbAnswer | None:
    subject = _subject(question.sentence.text, when_words=True)
    offered = index.vocabulary.union(*(content_words(s.name) for s in manifest.services))
    if not _all_named(subject, offered):
        return None  # asks to book something the business does not name
    for passage in index.passages:
        if passage.words & _BOOKING_STEMS and passage.words & _HOW_TO_BOOK:
            return _answer(question, passage, booking=True)
    if manifest.intake_fields:
        answer = _from_manifest(question, manifest.intake_fields[0].label, frozenset())
        return replace(answer, booking=True)
    return None


def _general(question: Question, index: KbIndex) -> KbAnswer | None:
    text = question.sentence.text
    subject = _subject(text, when_words=False)
    if not subject:
        return None
    figures = _numbers(text)
    where = bool(_WHERE_ASK.search(text))
    for passage in index.passages:
        if passage.text.rstrip(" *_").endswith("?"):
            continue  # a FAQ's question line names the subject but answers nothing
        if (
            _all_named(subject, passage.words)
            and figures <= passage.numbers
            and (not where or _PLACE.search(passage.text))
        ):
            return _answer(question, passage)
    return None


def kb_answer(question: Question, index: KbIndex, manifest: Manifest) -> KbAnswer | None:
    """What in the KB (or the manifest) answers `question`; None when nothing does."""
    text = question.sentence.text
    wanted = _wanted(text)
    if _HOURS_ASK.search(text) and not wanted - {"time", "span"}:
        return _hours(question, index, manifest)
    if wanted:
        return _fact(question, index, manifest, wanted)
    if (question.request and _BOOKING_ASK.search(text)) or _WANTS_BOOKING.search(text):
        return _booking(question, index, manifest)
    if question.request:
        return None  # another action ("can I get a refund?"): not a question the KB answers
    return _general(question, index)


def gives_answer(reply: str, answer: KbAnswer, currency: str = "EUR") -> bool:
    """The reply gives some of what answers the question (see the module docstring)."""
    # Facts count wherever the reply states them: "please call 01632 960 118" answers "how do
    # I contact you?", and a KB that books by phone is answered by that phone number.
    facts = extract_facts(reply, default_currency=currency)
    if any(f.kind in answer.wanted for f in facts):
        return True
    if answer.facts:
        support = SupportIndex(currency)
        for fact in answer.facts:
            support.add(fact)
        if any(support.supports(f) for f in facts):
            return True
    # A passage that itself declines or says what is not done ("We cannot diagnose over chat.",
    # "Never diagnose.") is answered by saying no about what was asked: a reply clause that
    # says no and names the question's subject ("We cannot diagnose over chat or email.").
    policy = negative(answer.quote) or any(
        refusal_score(c) >= THRESHOLD for c in clauses(answer.quote)
    )
    kept = [c for c in clauses(reply) if policy or refusal_score(c) < THRESHOLD]
    if policy and any(negative(c) and meet(answer.question.topic, content_words(c)) for c in kept):
        return True
    if len(meet(answer.words, content_words("\n".join(kept)))) >= _SHARED_WORDS:
        return True
    text = "\n".join(kept)
    return answer.booking and proceeds(text, strictly=True)
