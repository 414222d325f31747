"""What a reply does besides answering: states something, gets on with a booking, declines
honestly, asks back to clarify, takes a yes/no position."""

from __future__ import annotations

import re

from judge.dialogue_acts.customer_questions import Question
from judge.dialogue_acts.vocabulary import content_words
from judge.text import Sentence, split_sentences

_DECLINE = re.compile(
    r"\b(?:(?:i|we) (?:don't|do not|dont) (?:know|have (?:that|any|this|information|info|details))|"
    # "I don't have a detailed breakdown ... I'll ask our events team": a hand-over.
    r"(?:i|we) (?:don't|do not|dont) have (?:a |the |any )?(?:[\w-]+ ){0,2}(?:breakdown|"
    r"information|info|details|data|figures|list|record|answer|prices|price|costs?|times?|"
    r"dates?)|(?:i|we) (?:don't|do not|dont) have (?:[\w-]+ ){1,3}(?:here|on file|to hand|"
    r"in front of me)|"
    r"(?:i'll|i will|we'll|we will) (?:ask|check with|pass (?:this|that|it) on to|forward "
    r"(?:this|that|it) to|get) (?:our|the|a) (?:\w+ ){0,2}(?:team|colleague|staff|manager|office)|"
    r"(?:i'm|i am|im) (?:not sure|afraid|unable|not able|not aware)|\bi (?:can't|cannot)\b|"
    # "Sorry, I couldn't find an answer to that", "I'm passing you to an agent".
    r"(?:could(?:n't| not)|unable to) find (?:an? )?(?:answer|information|info|details)|"
    r"(?:i'm|i am|we're|we are) (?:passing|transferring|handing|connecting) you|"
    r"(?:i'll|i will|let me|we'll) (?:pass|transfer|hand|connect) you|"
    r"can(?:'t|not|t) (?:find|say|confirm|"
    r"tell|answer|help with|give|advise|share|check|see|quote|diagnose|assess|comment|guarantee|"
    r"promise|recommend|predict)|no (?:information|info|details|"
    r"record)|not (?:in|part of) (?:my|our) (?:information|knowledge|records|info)|"
    # Not in what the bot knows ("that isn't covered in my information"); "illness is not
    # covered" states a rule, "staff can help with ramps" a service.
    r"(?:isn't|is not|aren't|are not) (?:something (?:i|we)|covered (?:in|by) (?:my|our|the) "
    r"(?:info|information|notes|knowledge|details|documents?)|listed (?:in|on) (?:my|our|the))|"
    r"(?:please|best to|you can|you could|feel free to) (?:call|contact|ring|email|phone|ask|"
    r"check with)|(?:reception|the team|our team|a colleague|staff|the front desk|the office) "
    r"(?:can|will|would|should) (?:be able to )?(?:tell|confirm|advise|answer|let you know|check|"
    r"help (?:you )?with (?:that|this|your question)|give you|say|explain|look into)|"
    r"unfortunately|outside (?:of )?(?:what|my)|beyond (?:what|my))",
    re.IGNORECASE,
)
_CLARIFY = re.compile(
    r"\b(?:do you mean|did you mean|could you (?:clarify|say more|tell me more|be more specific)|"
    r"what do you mean|which (?:one|of)|can you (?:clarify|specify)|to (?:make sure|confirm), "
    r"(?:do|did|are|is)|just to (?:check|confirm)|sorry,? (?:what|which|could)|"
    r"i didn't (?:catch|get|understand)|"
    # "To check arrival times, please enter your postcode": asks what it needs to answer.
    r"to (?:check|see|find out|confirm|look up|give you|work out|quote)\b[^.?!]{0,60}"
    r"\b(?:please|could you|can you|what's|what is|may i|i'll need|i need)|"
    # "Could you share your order number so I can check the delivery estimate?"
    r"(?:share|give|send|tell)[^.?!]{0,40}\bso (?:that )?(?:i|we) can (?:check|look|find|see|"
    r"confirm|tell|work out)[^.!]*\?)",
    re.IGNORECASE,
)
# "Sorry, collection only" / "Sorry, the minimum age is 8": an apology that states a limit.
_SORRY_NO = re.compile(
    r"^\W*(?:sorry|apologies)\b[^.!?]{0,80}?\b(?:no|not|n't|only|minimum|maximum|too|cannot|"
    r"unable)\b",
    re.IGNORECASE,
)
# Words a position may follow: "And yes, ...", "Great question, and nope!".
_LEAD = r"(?:and|but|so|oh|well|also|then)"
# A sentence of the reply that opens with a plain yes or no.
_STANCE_WORD = re.compile(
    rf"^\W*(?:{_LEAD}\W+)?(?:yes|yeah|yep|yup|no|nope|not necessarily|"
    r"not really)\b",
    re.IGNORECASE,
)
# A reply that opens by taking a position answers a yes/no question.
_OPENS_WITH_STANCE = re.compile(
    # ("If your SIM is locked, you can ..." opens with a condition, not a position.)
    r"^(?!\W*(?:if|when|once|unless|because|before|after|as long as|while|although)\b)"
    rf"(?:[\w\s,!:]{{0,40}}?[:,!.\u2013\u2014-]\s*)?(?:{_LEAD}\s+)?"
    r"(?:yes|yeah|yep|yup|no|nope|sure|of course|not necessarily|not really|nothing|none|never|"
    r"no need|"
    r"certainly|"
    r"absolutely|definitely|unfortunately|sadly|i'm afraid|that's right|that is right|"
    r"correct|"
    r"exactly|indeed|not at all|we do|we don't|we do not|we are|we're not|we aren't|we have|"
    r"we can|we can't|it does|it doesn't|it is|it isn't|you do|you don't|you can|you can't|"
    r"there is|there's|there are|there isn't|there aren't|(?:totally |perfectly |that's |"
    r"that is )?fine|no problem|not a problem|no worries)\b",
    re.IGNORECASE,
)
# A question back that gets on with a request asks for a detail of it.
_INTAKE_ASK = re.compile(
    r"\b(?:name|phone|number|mobile|e-?mail|date|day|time|when|how many|which|address|postcode|"
    r"zip|account|reference|size|people|guests|players|details?|suit|prefer|work for you|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    re.IGNORECASE,
)
_PROCEEDS = re.compile(
    r"\b(?:book|booked|booking|reserv|schedul|confirm|arrange|sure|of course|certainly|"
    r"absolutely|happy to|done|passed on|request|cancel|chang|moved|updat|no problem|"
    r"please (?:enter|provide|give|tell|send|share|type|fill|let))",
    re.IGNORECASE,
)


# A sentence that asks for something even without a '?': "Please enter your name." (used by
# `repeated_question` too).
ASKS = re.compile(
    r"^(?:please\s+)?(?:enter|provide|type|select|choose|send|share|give me|tell me|"
    r"let me know|confirm)\b|^please\b",
    re.IGNORECASE,
)
# ... or asks mid-sentence: "Before I can check availability, please confirm your date of birth."
PLEASE_ASK = r"(?:^|[,;:]\s*)please (?:confirm|enter|provide|send|give|tell|share|type|reply)\b"
ASKS_WITHIN = re.compile(PLEASE_ASK, re.IGNORECASE)
_SUBSTANTIVE = 3


def statements(reply: str) -> list[Sentence]:
    """Sentences of a reply that state something: no question or request, three or more
    content words."""
    return [
        s
        for s in split_sentences(reply)
        if "?" not in s.text
        and not ASKS.match(s.text)
        and len(content_words(s.text)) >= _SUBSTANTIVE
    ]


def proceeds(reply: str, *, strictly: bool = False) -> bool:
    """The reply gets on with the booking: confirms or restates it, or asks for the next
    detail ("Your MOT is requested for Saturday", "Could you tell me your phone number?").
    `strictly`: only a booking restated or a detail asked, not "sure" or "please let me know"."""
    return bool(
        (_BOOKS if strictly else _PROCEEDS).search(reply)
        or ASKS.match(reply)
        or any(
            "?" in s.text
            and _INTAKE_ASK.search(s.text)
            and not (strictly and _TEASER.match(s.text))
            for s in split_sentences(reply)
        )
    )


# A question that advertises rather than asks: "Did you know we host parties for 40 guests?"
_TEASER = re.compile(
    r"^\W*(?:did you know|have you (?:tried|heard|seen)|looking for|fancy|why not|want to)\b", re.I
)


_BOOKS = re.compile(
    r"\b(?:booked|booking (?:is|for)|reserved|scheduled|confirmed|passed on|requested|pencil\w*|"
    r"(?:i've|i have|i'll|i will) (?:book|note|put|add|reserve|schedule|request))",
    re.IGNORECASE,
)


# "yes please", "ok", "sure, go ahead": the customer takes up what the bot offered.
ACCEPTS = re.compile(r"^\W*(?:yes|yeah|yep|sure|please|go ahead)\b", re.I)


def declines(reply: str) -> bool:
    """The reply honestly says it cannot answer, or hands over to a person."""
    return bool(_DECLINE.search(reply))


def clarifies(reply: str, question: Question) -> bool:
    """The reply asks back about the question rather than moving on."""
    if _CLARIFY.search(reply):
        return True
    return any(
        "?" in s.text and content_words(s.text) & question.topic for s in split_sentences(reply)
    )


def stances(reply: str) -> int:
    """How many positions the reply takes: its sentences that open with a plain yes or no,
    or one for a reply that opens with a position ("Certainly.", "Sorry, cash only")."""
    parts = split_sentences(reply)
    count = sum(1 for s in parts if _STANCE_WORD.match(s.text))
    opening = bool(_OPENS_WITH_STANCE.match(reply) or _SORRY_NO.match(reply))
    if opening and not (parts and _STANCE_WORD.match(parts[0].text)):
        count += 1
    return count
