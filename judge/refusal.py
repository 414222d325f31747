"""How much a reply refuses or deflects: `refusal_score(reply)` in [0, 1].

The one place the refusal signal lives. Rule-based for now (a learned head on the sentence
encoder of `judge.semantic` may replace or augment it later, behind the same signature): pure,
no state, no model.

Each clause of the reply (its sentences, cut where they turn: ", but", ", so", ";", " - ") is
read for three kinds of signal, each with a fixed weight:

- a refusal: the bot says it cannot or may not do or answer something ("I'm sorry, I can't help
  with that", "I'm not able to book appointments", "that's outside what I can do", "I can only
  answer general questions") - REFUSE;
- a deflection: it sends the customer elsewhere ("please contact the clinic directly", "you'll
  need to call reception", "I'll transfer you to a colleague") - DEFLECT;
- not knowing: "I don't have that information", "I couldn't find anything about that" - UNKNOWN;

plus a bare apology ("sorry", "unfortunately", "I'm afraid") - APOLOGY, which only adds to one
of the others. The strongest signal of each kind counts once: score = 1 - product(1 - weight).
A reply that also helps - a clause without those signals that states something (three or more
content words, or a price, time or duration) or gets on with a request ("what's your name?") -
is a partial refusal at most: its score is multiplied by PARTIAL. Greetings, thanks and
"anything else?" are neither help nor refusal.

The weights and THRESHOLD are set by hand, not fitted: any refusal or deflection alone reaches
THRESHOLD, "I don't know" alone just does, and no partial refusal does.
"""

from __future__ import annotations

import functools
import re

from judge.dialogue_acts import content_words, proceeds
from judge.facts import extract_facts
from judge.text import split_sentences

REFUSE = 0.85
DEFLECT = 0.6
UNKNOWN = 0.5
APOLOGY = 0.15
PARTIAL = 0.5
# A reply (or sentence) scoring at least this much refuses or deflects.
THRESHOLD = 0.5

_NOT_ABLE = (
    r"(?:can(?:no|')?t|cannot|can not|could(?:n't| not)|won't|will not|am not able to|"
    r"'m not able to|are not able to|'re not able to|not able to|unable to|"
    r"(?:am|'m|are|'re) not (?:allowed|permitted|authori[sz]ed) to|"
    r"(?:don't|do not) have (?:the )?(?:ability|access|permission) to|"
    r"(?:won't|will not) be able to)"
)
# What a bot says it cannot do: help, answer, book, quote ... ("I can't diagnose" is a refusal
# too; whether it refuses something the KB answers is the check's business).
_ACT = (
    r"(?:help|assist|answer|respond|book|make|schedule|arrange|reserve|process|handle|do|"
    r"provide|give|share|offer|quote|confirm|tell|say|check|look|see|access|discuss|deal|take|"
    r"support|advise|recommend|comment|diagnose|prescribe|find|get|go|accept|change|cancel|"
    r"modify|update|add|sort|place|issue|send|set)"
)
_REFUSE = re.compile(
    rf"\b(?:i|we)\s*(?:'m|am|are|'re)?\s*(?:really |truly |very )?(?:sorry,? (?:but )?)?"
    rf"(?:i |we )?(?:afraid (?:that )?(?:i |we )?)?{_NOT_ABLE}\s+(?:\w+\s+){{0,2}}?{_ACT}\b"
    # "That's not something I can help with", "this isn't something we're able to do".
    r"|\b(?:that|this|it)(?:'s| is|s)? (?:not|n't|isn't) something (?:i|we)(?:'m| am|'re| are)? "
    r"(?:can|could|able to|allowed to)\b"
    r"|\b(?:that|this|it)(?:'s| is) (?:not )?(?:outside|beyond|not within|not part of) "
    r"(?:of )?(?:my|our|what (?:i|we))\b"
    r"|\b(?:outside|beyond) (?:of )?(?:my|the) (?:scope|remit|capabilit\w*|abilit\w*|role)\b"
    r"|\b(?:i|we)(?:'m| am| are|'re)? (?:only )?(?:able|here|designed|set up|trained) to "
    r"(?:only )?(?:help|assist|answer|provide|handle|deal)\b[^.!?]{0,60}\bonly\b"
    r"|\b(?:i|we) can only (?:help|assist|answer|provide|handle|deal|give|take|discuss)\b"
    r"|\b(?:i|we)(?:'m| am| are|'re) (?:not|unable) (?:in a position|equipped) to\b",
    re.IGNORECASE,
)
_DEFLECT = re.compile(
    # "please contact the clinic directly", "you'll need to call reception", "best to email".
    r"\b(?:please|kindly|you(?:'ll| will| would|'d| may| might| can| could| should)?"
    r"(?: need to| have to| want to| wish to)?|best to|better to|(?:i|we)(?:'d| would)? "
    r"(?:recommend|suggest|advise)(?: that)?(?: you)?|recommend(?:ed)?|try)\s+"
    r"(?:directly )?(?:contact(?:ing)?|call(?:ing)?|ring(?:ing)?|phon(?:e|ing)|e-?mail(?:ing)?|"
    r"reach(?:ing)?(?: out(?: to)?)?|get(?:ting)? in touch|speak(?:ing)? (?:to|with)|talk(?:ing)? (?:to|with)|"
    r"visit(?:ing)?|check(?:ing)? with|message|ask(?:ing)? (?:at|in|the|our|a|your|staff|"
    r"reception|someone|us))\b"
    r"|\b(?:contact|call|ring|reach|email|phone) (?:us|the (?:\w+ )?(?:clinic|office|practice|shop|"
    r"store|team|desk|reception|salon|studio|centre|center|branch|helpline|support)|our "
    r"(?:\w+ )?(?:team|office|staff|reception|support|helpline|desk)|reception|support|a member "
    r"of (?:our |the )?(?:staff|team))\s+directly\b"
    r"|\b(?:i'll|i will|let me|i can|we'll|we will) (?:transfer|connect|put) you\b"
    r"|\b(?:i'm|i am|we're|we are) (?:transferring|connecting|passing|handing) you\b"
    r"|\b(?:a (?:member of (?:our|the) )?(?:team|staff|colleague|human|agent|person)|our team|"
    r"(?:a|one of our) (?:staff|team) members?|someone from (?:our|the) team) (?:will|can|would "
    r"be (?:able|happy) to) (?:get back|contact|call|help|assist|answer|advise)\b",
    re.IGNORECASE,
)
_UNKNOWN = re.compile(
    r"\b(?:i|we) (?:don't|do not|dont) (?:have|know|hold)\b[^.!?]{0,30}\b(?:information|info|"
    r"details|answer|data|record)\b"
    r"|\b(?:i|we) (?:don't|do not|dont) know\b"
    # "I don't have a site map": the bot lacks it ("we don't have parking" is an answer).
    r"|\bi (?:don't|do not|dont) have (?:a|an|any|the|that|this)\b"
    r"|\b(?:i'm|i am|we're|we are) (?:not sure|unsure|not certain|not aware)\b"
    r"|\b(?:could(?:n't| not)|can(?:'t|not)|was unable to|were unable to) find\b"
    r"|\bno (?:information|info|details|record)s? (?:about|on|of|for|regarding)\b"
    r"|\b(?:not|isn't|aren't) (?:in|covered (?:in|by)|part of|listed (?:in|on)) (?:my|our|the) "
    r"(?:information|info|knowledge|records|notes|documents|details)\b",
    re.IGNORECASE,
)
_APOLOGY = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies|unfortunately|regrettably|i'm afraid|i am afraid)\b",
    re.IGNORECASE,
)
# Greetings, thanks and sign-offs: neither help nor refusal.
_PLEASANTRY = re.compile(
    r"^\W*(?:(?:hi|hello|hey|good (?:morning|afternoon|evening))\b|thanks?\b|thank you\b|"
    r"(?:you're|you are) welcome\b|have a (?:\w+ )?(?:day|evening|weekend)\b|"
    r"(?:is there )?anything else\b|(?:i )?hope (?:this|that) helps\b|(?:i )?understand\b|"
    r"i (?:completely |totally |fully )?understand\b|glad\b|happy to help\b|"
    r"(?:i'm|i am) (?:sorry|afraid)\W*$|sorry\W*$)",
    re.IGNORECASE,
)
# Where a sentence turns from one thing to another: "You can pop in, but it's best to ring
# ahead"; "Sorry, but I can't help with that".
_CLAUSE = re.compile(
    r",?\s+(?:but|so|although|though|however|whereas)\s+|;\s*|\s+[-\u2013\u2014]\s+"
)
_CONTACT_KINDS = frozenset({"phone", "email", "url"})
_NEGATIVE = re.compile(r"\b(?:no|not|never|cannot|unable)\b|n[’']t\b", re.IGNORECASE)
_SUBSTANTIVE = 3


def _signals(sentence: str) -> tuple[float, float, float, float]:
    return (
        REFUSE if _REFUSE.search(sentence) else 0.0,
        DEFLECT if _DEFLECT.search(sentence) else 0.0,
        UNKNOWN if _UNKNOWN.search(sentence) else 0.0,
        APOLOGY if _APOLOGY.search(sentence) else 0.0,
    )


def _helps(sentence: str) -> bool:
    """The sentence gives something besides a refusal: a statement of three or more content
    words, or a fact other than a way to contact someone."""
    if _PLEASANTRY.match(sentence):
        return False
    if "?" not in sentence and len(content_words(sentence)) >= _SUBSTANTIVE:
        return True
    return any(f.kind not in _CONTACT_KINDS for f in extract_facts(sentence))


def negative(text: str) -> bool:
    """The text says no, not, never, cannot, unable or a "-n't": a statement of what is not
    done or offered (a policy line: "Never diagnose.", "We don't take walk-ins.")."""
    return bool(_NEGATIVE.search(text))


def clauses(text: str) -> list[str]:
    """The sentences of `text`, each cut where it turns ("..., but ...", "; ", " - ")."""
    return [
        part.strip()
        for sentence in split_sentences(text)
        for part in _CLAUSE.split(sentence.text)
        if part.strip()
    ]


@functools.lru_cache(maxsize=4096)
def refusal_score(reply: str) -> float:
    """How much `reply` refuses or deflects what it was asked, in [0, 1]: 0 for a reply with no
    refusal, deflection or "I don't know" in it; at least THRESHOLD for one that refuses or
    deflects and gives nothing else (see the module docstring)."""
    read = [(clause, _signals(clause)) for clause in clauses(reply)]
    strongest = [max(weights) for weights in zip(*(signals for _, signals in read), strict=True)]
    if not read or not any(strongest[:3]):
        return 0.0
    helpful = any(
        not any(signals[:3]) and (_helps(clause) or proceeds(clause, strictly=True))
        for clause, signals in read
    )
    remaining = 1.0
    for weight in strongest:
        remaining *= 1.0 - weight
    score = 1.0 - remaining
    if helpful:
        score *= PARTIAL
    return round(min(max(score, 0.0), 1.0), 4)
