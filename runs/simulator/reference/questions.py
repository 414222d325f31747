"""Reading the customer's message: the questions for information it asks, what a question is
about, and whether the message asks to book, asks for a suggestion or only says thanks."""

from __future__ import annotations

import difflib
import re

from runs.simulator.retrieval import content_words

INJECTION = re.compile(
    r"ignore (?:all |any )?(?:of )?(?:your |ur |the |my )?(?:previous|prior|above|earlier|former) "
    r"instructions|system prompt|developer mode|jailbreak|you are now|"
    r"\bi(?:'?m| am) (?:the |your )?(?:manager|owner|admin|developer)\b",
    re.IGNORECASE,
)
_BOOKING = re.compile(
    r"\b(?:book\w*|appointment|come in|schedule|reserve|make it)\b", re.IGNORECASE
)
_NEGATED_BOOKING = re.compile(
    r"\b(?:don'?t|do not|dont|not) (?:want|need|wanna) to (?:come in|book)|"
    r"\bbefore (?:i|we) (?:book|come in)|\bbefore booking\b|"
    r"\b(?:rather|prefer) not (?:to )?(?:come in|book)|\bnot (?:coming|come) in\b",
    re.IGNORECASE,
)
SUGGEST = re.compile(
    r"\b(?:suggest|recommend|what do (?:you|u) think|not sure|unsure|no idea|dunno|"
    r"don'?t know|any ideas?)\b",
    re.IGNORECASE,
)
_TOPIC = (
    re.compile(
        r"\b(?:do|does|can|could) (?:you|u|ye)\s+(?:do|offer|have|provide|sell|stock|fit|treat)\s+"
        r"(?P<topic>[^?.!,;]+)",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:is|are) there\s+(?P<topic>[^?.!,;]+)", re.IGNORECASE),
    re.compile(
        r"\b(?:do|should|must|will) (?:i|we)\s+(?:need to |have to )?"
        r"(?P<todo>bring|wear|prepare|fill in|eat|pay)\b",
        re.IGNORECASE,
    ),
)
_TOPIC_TAIL = re.compile(
    r"\s+(?:for (?:it|that|this|them)|too|as well|at all|near(?:by| u| you| here)?|"
    r"anywhere|for me|please|pls|then)\b.*$",
    re.IGNORECASE,
)
_THANKS_WORDS = ("thanks", "thank", "cheers", "helpful", "appreciated", "goodbye", "bye", "thx")
_LETTERS = re.compile(r"[a-z']+")
_PIECE_SPLIT = re.compile(r",\s*|;\s*|\s+-\s+|:\s+")
SENTENCES = re.compile(r"[^.!?]+[.!?]*")
_QUESTION_START = re.compile(
    r"^\W*(?:(?:hi|hey|hello|ok|okay|and|so)(?: there)?\W+)*"
    r"(?:how|what|when|where|which|who|why|are|is|do|does|can|could|will|r u|u open)\b",
    re.IGNORECASE,
)
_INFO_QUESTION = re.compile(
    r"\b(?:how much|how long|price|cost|open|hours|policy|policies|what|when|which|where|"
    r"is there|are there|do (?:you|u)|does|tell me (?:about|more))\b",
    re.IGNORECASE,
)


def _question_part(sentence: str) -> str:
    """The question in a sentence that also says other things: from its first piece that
    opens like a question for information to the end ("hmm next Tuesday, is there parking
    near u?" -> "is there parking near u?"; "can i come in on the 19th, do i need to bring
    anything?" -> "do i need to bring anything?"); "" when it asks nothing."""
    cuts = list(_PIECE_SPLIT.finditer(sentence))
    starts = [0] + [m.end() for m in cuts]
    ends = [m.start() for m in cuts] + [len(sentence)]
    for start, end in zip(starts, ends, strict=True):
        piece = sentence[start:end]
        if _QUESTION_START.match(piece) and _is_question(f"{piece}?"):
            return sentence[start:].strip()
    return sentence.strip() if _is_question(sentence) else ""


def info_questions(message: str) -> list[str]:
    """The questions for information in a message, one per sentence ("Could I book one?" and
    "can i come in on Friday?" are bookings, not questions)."""
    out: list[str] = []
    for m in SENTENCES.finditer(message):
        sentence = m.group(0).strip()
        part = _question_part(sentence) if "?" in sentence else sentence
        if not part or not _is_question(part) or INJECTION.search(part):
            continue
        if out and len(content_words(part)) < 3:
            out[-1] = f"{out[-1]} {part}"  # "u open on Saturday? till when"
        else:
            out.append(part)
    return out


def _is_question(text: str) -> bool:
    """A request for information; "can I book X?" alone is a booking, not a question."""
    asks = "?" in text or bool(_INFO_QUESTION.search(text))
    if asks and _BOOKING.search(text) and not _INFO_QUESTION.search(text):
        return False
    return asks


def is_small_talk(message: str) -> bool:
    """Thanks and goodbyes ("great, thanks - you've been very helpful!"), typos and all."""
    words = _LETTERS.findall(message.casefold())
    if not words or len(words) > 14 or "?" in message:
        return False
    return any(difflib.get_close_matches(w, _THANKS_WORDS, 1, 0.8) for w in words if len(w) > 2)


def question_topic(question: str) -> tuple[str, str]:
    """What a question asks about, as a short noun phrase, and how it asks: "offer" (do you
    do X?), "exists" (is there X?), "todo" (do I need to bring ...?) or "" (anything else)."""
    for pattern, kind in zip(_TOPIC, ("offer", "exists", "todo"), strict=True):
        m = pattern.search(question)
        if not m:
            continue
        if kind == "todo":
            return f"what to {m.group('todo').casefold()}", kind
        topic = _TOPIC_TAIL.sub("", m.group("topic")).strip(" -")
        topic = re.sub(r"^any\s+", "", topic, flags=re.IGNORECASE)
        topic = re.sub(r"^(?:anywhere|somewhere) to\b", "where to", topic, flags=re.IGNORECASE)
        if topic and len(topic.split()) <= 6:
            return topic, kind
    return "", ""


def asks_to_book(message: str, services: list[str]) -> bool:
    """Does the customer ask to book? A service's own name ("Emergency appointment") is not a
    request, nor is "before I book" or "I'd rather not come in"."""
    text = message
    for name in services:
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return bool(_BOOKING.search(text)) and not _NEGATED_BOOKING.search(text)
