"""What a customer turn asks: its questions and implied requests, clause by clause."""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.dialogue_acts.vocabulary import GENERIC, content_words, kindred, topic_words
from judge.text import Sentence, split_sentences, words

_INTERROGATIVE = re.compile(
    r"^(?:(?:and|but|so|also|ok|okay|um|uh|oh|well|then|plus|hmm)\W+)*(?:what|what's|whats|which|when|where|who|whom|whose|why|how|is|are|am|was|were|do|does|"
    r"did|can|could|would|will|should|shall|may|might|have|has|had|any|r|u)\b",
    re.IGNORECASE,
)
# Requests for information or advice phrased without a question mark.
_IMPLIED = re.compile(
    r"\b(?:what (?:would|do) (?:you|u) (?:suggest|recommend|advise)|(?:any|your) "
    r"(?:suggestions?|recommendations?|advice)|(?:i|we) (?:need|want|would like|'d like) to "
    r"know|(?:i was|i'm|im) wondering|let me know|tell me|can (?:you|u) (?:tell|explain|check)|"
    r"not sure (?:what|which|if|whether)|no idea (?:what|which)|do (?:you|u) know|"
    r"(?:i'm|im|i am) (?:looking for|after) (?:info|information|details))\b",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"\b(?:suggest|recommend|advise|advice|suggestions?|which one|best|what should (?:i|we)|"
    r"options?|choices?|alternatives?|what (?:do|can|shall) (?:i|we) do|what happens (?:next|now|"
    r"then)|what(?:'s| is) next|what now)\b",
    re.IGNORECASE,
)
_AUX = r"(?:is|are|am|was|were|do|does|did|can|could|will|would|should|shall|may|have|has|had)"
# A question without a question mark: an auxiliary before its subject at the start of a clause
# ("also do you do varifocals", "if it fails do you do the repairs same day").
_INVERSION = re.compile(
    rf"(?:^|[,;:.!]\s*|\b(?:and|but|also|so|oh|ok|okay|well|wait|sorry|then|hey|hi|plus|or|um|"
    rf"uh|er|erm|yeah|like)\s+"
    rf"|\bif(?:\s+[\w']+){{1,4}}\s+){_AUX}\s+(?:i|we|you|u|ya|it|that|this|there|they|he|she)\b"
    # "does the top up work abroad", "is the shop open sunday": a question about a thing.
    r"|^\W*(?:(?:and|but|so|also|ok|okay|um|oh|well|then|plus)\W+)*(?:do|does|did|is|are|can|"
    r"could|will|would|should)\s+(?:the|my|your|our|his|her|this|that|these|those)\s+\w+",
    re.IGNORECASE,
)
# A wh-question run into a statement: "the vet bill was 2400 so what do i get back roughly",
# "i haven't heard anything when will it be paid", "... how much notice do i need to give".
_EMBEDDED_WH = re.compile(
    r"\b(?:what|when|where|which|why|how(?: much| many| long| soon| often)?)(?:\s+[a-z]+)?\s+"
    r"(?:do|does|did|can|could|will|would|should|is|are|am)\s+(?:i|we|you|u|it|they|he|she|my|our)\b",
    re.IGNORECASE,
)
# A statement that opens with an auxiliary ("has lenovo laptop in it") is no question without
# a '?' unless its subject follows (`_INVERSION`).
_AUX_OPENING = re.compile(
    rf"^\W*(?:(?:and|but|so|also|ok|okay|um|uh|oh|well|then|plus|hmm)\W+)*{_AUX}\b", re.I
)
_EXCLAIMS = re.compile(
    r"^\W*(?:what an?|how (?:lovely|nice|great|cool|kind|sweet))\b(?!.*\?)", re.I
)
_ABOUT_THE_CHAT = re.compile(
    r"\b(?:(?:that'?s|thats|that is) not what i (?:asked|said|meant)|not what i asked|"
    r"i (?:just |already )?(?:gave|told|said|sent|asked)(?: (?:it|you|u|that|this))?"
    r"(?: (?:already|before|earlier))?\W*$|i thought (?:you|u) said|"
    r"why (?:are |r )?(?:you|u) (?:telling|asking|saying|sending|giving))",
    re.IGNORECASE,
)
# "huh?", "sorry?", "what??", "wait, what?": confusion about the last reply, no request for a fact.
_BARE = re.compile(
    r"^\W*(?:(?:wait|sorry|hm+|um+|uh+|eh|huh|what|pardon|really|seriously|come again|excuse me)"
    r"\W*)+$",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:it|that|this|they|them|those|these)\b", re.IGNORECASE)
_WH = re.compile(
    r"\b(?:what|what's|whats|which|when|where|who|whom|whose|why|how)\b", re.IGNORECASE
)
# "What does that involve?": a question about what was just said takes its topic from the
# customer's whole message.
ABOUT_THAT = re.compile(
    r"^\W*(?:so\s+|and\s+|ok\s+)?(?:what|how)\b.*\b(?:that|it|this|those|these)\b", re.I
)


# "Can I book a clean?", "how do I sign up", "I need to cancel it" ask for an action: a reply
# that gets on with it (asks for the next detail, confirms) takes it up.
_REQUEST = re.compile(
    r"\b(?:can|could|may|would it be possible to|is it possible to)\s+"
    r"(?:(?:i|we|you|u|someone|somebody|anyone)\s+)?(?:also\s+)?"
    r"(?:please\s+)?(?:book|make|get|have|come|send|visit|fix|schedule|reserve|arrange|change|move|cancel|add|"
    r"sign|register|order|see|grab|do)\b"
    r"|\bhow (?:do|can|would) (?:i|we)\s+(?:book|sign up|register|enrol|enroll|join|apply|"
    r"reserve|make a booking|get started)\b"
    r"|(?<!do )(?<!does )(?<!will )(?<!should )(?<!must )"
    r"\b(?:i|we) (?:need|want|would like|'d like|wanna|have) to (?:cancel|change|move|"
    r"reschedule|book|update|return|complain|report|pay|order|add|remove|swap)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Question:
    """A request for information or advice in a customer turn: its sentence and topic words."""

    sentence: Sentence
    topic: frozenset[str]
    yes_no: bool
    advice: bool
    request: bool
    # Content words of the whole sentence the clause came from ("And if I wanted to repay
    # early, would there be a penalty?" -> repay, early, penalty); of the whole message for a
    # question about what it just said ("I think he needs his hearing checked. what does that
    # involve?").
    context: frozenset[str] = frozenset()
    # "can i come in after april 1 or is that too late": the second of two alternatives, which
    # one answer settles.
    alternative: bool = False


SLOT_WORD = re.compile(
    r"mon(?:day)?|tues?(?:da)?|wed(?:nes)?|thu(?:rs?d?)?|fri(?:day)?|sat(?:urd)?|sun(?:day)?|"
    r"\d{1,2}(?::?\d{2})?(?:am|pm)?|\d{1,2}(?:st|nd|rd|th)|"
    r"morning|aftern|evenin|tonigh|tomorr|next|week|weeken",
    re.IGNORECASE,
)


# "tues the 3rd around 11?": words that only soften a proposed slot.
_ROUGHLY = frozenset({"around", "about", "ish", "approx", "roughly", "earliest", "latest"})
_HELP = frozenset({"help", "possib", "doable", "ok", "okay", "fine", "work"})


# "Which service would you like, and could you tell me your name?" and "Can I book two tickets,
# and is there a lift?" ask two things: each clause is a question of its own.
_CLAUSE = re.compile(
    r",\s*(?:and|or|also|plus)\s+|\s+(?:and|or|also)\s+(?=(?:could|can|would|will|what|which|"
    r"when|where|how|may|do|did|is|are|please|tell|let)\b)|;\s*|,\s+(?=(?:could|can|would|what|"
    r"which|when|where|how|may)\b)",
    re.IGNORECASE,
)


def clauses(sentence: Sentence) -> list[Sentence]:
    """The clauses of a sentence split at ", and ...", "; " and before a new question word;
    each is still exactly the source text at its position."""
    parts: list[Sentence] = []
    start = 0
    for match in _CLAUSE.finditer(sentence.text):
        parts.append(_part(sentence, start, match.start()))
        start = match.end()
    parts.append(_part(sentence, start, len(sentence.text)))
    return [p for p in parts if p.text.strip(" ,;?")]


def _part(sentence: Sentence, start: int, end: int) -> Sentence:
    raw = sentence.text[start:end]
    lead = len(raw) - len(raw.lstrip(" ,;"))
    text = raw.strip(" ,;")
    return Sentence(sentence.start + start + lead, sentence.start + start + lead + len(text), text)


_CAN_DO = re.compile(
    r"^\W*(?:(?:yeah|yes|yep|ok|okay|sure|great|perfect|fine)\W+)*(?:(?:i|we)\s+)?"
    r"can\s+(?:do|make|manage)\b",
    re.IGNORECASE,
)
_GOES_ON = re.compile(rf"^\W*(?:and|also|plus|oh and|and also)\s+{_AUX}\b", re.IGNORECASE)


def questions(text: str) -> list[Question]:
    """The questions and implied requests in a customer turn, clause by clause."""
    found: list[Question] = []
    previous: Sentence | None = None
    for whole, sentence in ((s, c) for s in split_sentences(text) for c in clauses(s)):
        between = text[previous.end : sentence.start] if previous else ""
        alternative = previous is not None and bool(re.fullmatch(r"[\s,]*or\s*", between))
        previous = sentence
        # A message may hold several: "ok thanks. what about Sunday?", "X, and is there Y?"
        body = sentence.text
        inverted = bool(_INVERSION.search(body))
        # "yeah can do wed." offers a slot; it asks for nothing.
        request = bool(_REQUEST.search(body)) and ("?" in body or not _CAN_DO.match(body))
        opens = bool(_INTERROGATIVE.match(body)) and (
            "?" in body
            or inverted
            or not _AUX_OPENING.match(body)
            # "... fri after 5? and is nail art extra": a second question goes on from a first.
            or bool(found and "?" in found[-1].sentence.text and _GOES_ON.match(body))
        )
        embedded = bool(_EMBEDDED_WH.search(body))
        if not ("?" in body or inverted or request or opens or embedded or _IMPLIED.search(body)):
            continue
        # "what a gorgeous town!", "i gave it already??", "that's not what i asked?": no
        # request for information (the complaint is about the last reply, which the other
        # checks judge).
        if _EXCLAIMS.match(body) or _ABOUT_THE_CHAT.search(body) or _BARE.match(body):
            continue
        if (
            "?" not in body
            and not (inverted or embedded or _IMPLIED.search(body))
            and len(words(body)) < 3
        ):
            continue
        own = topic_words(body)
        yes_no = inverted or ("?" in body and not _WH.search(body))
        # "could you help?", "possible?", "what does that involve?", "is it safe?": about the
        # whole message.
        about_message = (
            bool(ABOUT_THAT.match(body))
            or own <= _HELP
            or (yes_no and len(own) <= 1 and bool(_PRONOUN.search(body)))
        )
        # "Thursday 6pm?" proposes a slot: a request to book it.
        request = request or bool(
            own
            and not (inverted or _INTERROGATIVE.match(body) or _WH.search(body))
            and any(SLOT_WORD.fullmatch(w) for w in own)
            and all(SLOT_WORD.fullmatch(w) or w in _ROUGHLY for w in own)
        )
        found.append(
            Question(
                sentence=sentence,
                topic=kindred(own),
                yes_no=yes_no,
                advice=bool(_ADVICE.search(body)),
                request=request,
                context=kindred(content_words(text if about_message else whole.text) - GENERIC),
                alternative=alternative,
            )
        )
    return found
