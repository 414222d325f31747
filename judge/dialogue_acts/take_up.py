"""Whether a reply takes up a customer's question: answers it, asks back, declines honestly
or answers in the words of the KB; and the questions of a message a reply leaves open."""

from __future__ import annotations

import re

from judge.dialogue_acts.customer_questions import ABOUT_THAT, SLOT_WORD, Question
from judge.dialogue_acts.expectations import EXPECTS, HINTS, SPAN_LEAD, SPAN_TRAIL, WHEN_SPAN
from judge.dialogue_acts.kb_bridge import KbLines, bridged
from judge.dialogue_acts.reply_acts import clarifies, declines, proceeds, stances, statements
from judge.dialogue_acts.vocabulary import content_words, meet
from judge.facts import extract_facts
from judge.text import split_sentences

_WH_VERB = re.compile(
    r"\b(?:what|which|how much|how many)\b.*\b(?:do|should|can|must) (?:i|we) (\w{3,})\b", re.I
)
_POLARITY = re.compile(
    r"\b(?:yes|yeah|yep|no|nope|not|n't|sure|of course|certainly|absolutely|definitely|indeed|"
    r"unfortunately|sadly|afraid|only|always|never|closed|open|available|unavailable|included|"
    r"applies|apply|does|do|can|cannot|can't|we are|we're|we have|we do|we offer|you can|you'll|"
    r"you will|you need|you don't|there is|there's|there are)\b",
    re.IGNORECASE,
)
# "Does that also apply to X?" asks about the previous topic: sharing X's words is no answer.
_ANAPHORIC = re.compile(
    r"\b(?:that|it|this|the same)\b.*\b(?:apply|applies|also|too|same|include|count|work)\b",
    re.IGNORECASE,
)
_STANCE = re.compile(
    r"\b(?:yes|yeah|yep|no|nope|not|n't|applies|apply|also|same|only|too|as well|either|"
    r"neither|includ\w*|except|both)\b",
    re.IGNORECASE,
)
# A statement that settles a yes/no question without saying "yes": "Large bags aren't allowed",
# "Early repayment is permitted", "No appointment needed", "Collection only".
_SETTLES = re.compile(
    r"\b(?:allowed|permitted|not|n't|no|only|need|needed|required|must|cannot|available|"
    r"unavailable|included|free|limited|possible|impossible|welcome)\b",
    re.IGNORECASE,
)
# "What if I can't make it?" is answered by what happens then: a fee, a refund, a rule.
_WHAT_IF = re.compile(
    r"\bwhat (?:if|happens if|happens when|about if)\b"
    r"|\bwhat (?:do|should|can|would) (?:i|we) do (?:if|when)\b|^\W*(?:and |but |so |what )?if\b",
    re.IGNORECASE,
)
# A reply sentence that states what happens in that case: "If conditions are unsafe, ...".
_CONDITIONAL = re.compile(r"^\W*(?:if|in (?:that|this|which) case|should)\b", re.IGNORECASE)
_CONSEQUENCE = re.compile(
    r"\b(?:otherwise|charged?|fee|refund\w*|lost|forfeit\w*|cancel\w*|reschedul\w*|"
    r"rebook\w*|move|moved|no charge|free of charge|you(?:'ll| will) (?:need|have|get|be)|"
    r"we(?:'ll| will)|notice|deposit|kept|keep|credit)\b",
    re.IGNORECASE,
)
# A question to the bot about itself ("are you a robot?", "who am i talking to?", "have you been
# to Denmark?") is answered by the bot saying what it is ("I'm Bella, a virtual assistant").
_ABOUT_BOT = re.compile(
    r"\b(?:(?:are|r) (?:you|u|ya)|is (?:this|it|that)) (?:a |an )?(?:real|human|person|robot|bot|"
    r"ai|machine|computer|chat ?bot|automated|actual)\b|\bwho (?:am i|are (?:you|u)|is this)\b|"
    r"\b(?:talking|speaking|chatting) (?:to|with)\b|\b(?:have|did|do) (?:you|u) (?:ever )?"
    r"(?:been|go|went|visit|like|love|eat|tried)\b",
    re.IGNORECASE,
)
_SELF_DESCRIBED = re.compile(
    r"\b(?:i'?m|i am|this is|as)\b[^.!?]{0,40}?\b(?:assistant|bot|chat ?bot|ai|virtual|automated|"
    r"human|real person|robot|computer|program|language model|digital)\b",
    re.IGNORECASE,
)
# "is there a better deal?" is answered by what there is: "We have a 5-day pack ...".
_EXISTENTIAL = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:is|are) there\b|\bany (?:\w+ )?(?:deals?|"
    r"offers?|discounts?|options?)\b",
    re.IGNORECASE,
)
_THERE_IS = re.compile(
    r"\b(?:there (?:is|are|'s)|there's|we (?:have|offer|do|run|can)|we've got|you can (?:get|"
    r"choose|book|buy|take)|(?:is|are) available)\b",
    re.IGNORECASE,
)
# "where is my order/refund?" is answered by where it stands.
_WHERE_IS_MINE = re.compile(r"\bwhere(?:'s| is| are)\s+(?:my|our|the)\b", re.IGNORECASE)
_STATUS = re.compile(
    r"\b(?:in transit|on (?:its|the) way|dispatched|shipped|delivered|out for delivery|with (?:the )?"
    r"courier|approved|processed|processing|arriv\w*|expected|tracking|collected|received|"
    r"issued|refunded|ready|being prepared|held at|waiting (?:at|for))\b",
    re.IGNORECASE,
)
_DEPENDS = re.compile(r"\bdepends? (?:on|upon)\b|\bvar(?:y|ies) (?:by|with|depending)\b", re.I)
_SHORT_NUMBER = re.compile(r"(?<![\d.,])\d{2,4}(?![\d])")
# A figure with no unit or with a currency ("the full 450?", "£1,200?"), not a date, a clock
# time or a span ("12th", "6:30", "20 minutes").
_AMOUNT = re.compile(r"(?<![\d.,:])\d{2,}(?:[.,]\d+)?(?![\d:]|st\b|nd\b|rd\b|th\b|am\b|pm\b)", re.I)


def answers(reply: str, question: Question, *, stance_rank: int = 0) -> bool:
    """The reply gives the kind of fact the question asks for, or shares its topic words, or
    (for a yes/no question) takes a position, or (for advice) suggests something.
    `stance_rank`: how many yes/no questions of the same message come before this one; one
    "Yes." answers one of them ("Yes, cash on delivery is ¥330" does not also say whether the
    address can change)."""
    if question.request and proceeds(reply):
        return True
    asked = question.sentence.text
    # "thurs after work poss?" is taken up by a reply that books a slot (which day it books
    # is `partner_contradiction`'s business).
    if (
        question.yes_no
        and any(SLOT_WORD.fullmatch(w) for w in question.topic)
        and proceeds(reply, strictly=True)
    ):
        return True
    if _ABOUT_BOT.search(asked) and _SELF_DESCRIBED.search(reply):
        return True
    said = statements(reply)
    facts = extract_facts(reply)
    kinds = {f.kind for f in facts} | {
        WHEN_SPAN
        for f in facts
        if f.kind == "duration"
        and (
            SPAN_LEAD.search(reply[max(0, f.start - 24) : f.start])
            or SPAN_TRAIL.match(reply[f.end : f.end + 24])
        )
    }
    if _EXISTENTIAL.search(asked) and any(_THERE_IS.search(s.text) for s in said[:3]):
        return True
    if _WHERE_IS_MINE.search(asked) and _STATUS.search(reply):
        return True
    # A figure the question names and the reply repeats ("before u said 28?" -> "the refund
    # window is 28 days").
    if set(_SHORT_NUMBER.findall(asked)) & set(_SHORT_NUMBER.findall(reply)):
        return True
    # "so I'd get the full 450?" is settled by the figure the reply gives instead ("the most
    # you could claim is three hundred pounds").
    if (
        question.yes_no
        and _AMOUNT.search(asked)
        and all(f.kind == "money" for f in extract_facts(asked))
        and "money" in kinds
    ):
        return True
    if question.yes_no and stances(reply) > stance_rank:
        return True
    if question.yes_no and _ANAPHORIC.search(question.sentence.text):
        return bool(_STANCE.search(reply))
    if question.yes_no and any(
        _SETTLES.search(s.text) and content_words(s.text) & question.context for s in said
    ):
        return True
    # A reply that opens by stating a rule settles a yes/no question about it ("Can I bring my
    # backpack in?" -> "Large bags aren't allowed ..."; "do i need to book?" -> "No appointment
    # needed").
    if (
        question.yes_no
        and not question.context
        and said
        and _SETTLES.search(said[0].text)
        and said[0].start < 80
    ):
        return True
    if _WHAT_IF.search(question.sentence.text) and any(
        _CONSEQUENCE.search(s.text) or _CONDITIONAL.match(s.text) for s in split_sentences(reply)
    ):
        return True
    # "how many do people usually need?" -> "How many you need depends on how confident you
    # feel": what it depends on is an answer.
    if not question.yes_no and _DEPENDS.search(reply):
        return True
    reply_words = content_words(reply)
    shared = meet(question.topic, reply_words)
    # Advice is given by any statement (a suggestion rarely says "I suggest"); a reply that only
    # asks the next question gives none.
    if question.advice and statements(reply):
        return True
    # "what ielts do i need?" -> "you need six point five": the reply takes up its verb.
    verb = _WH_VERB.search(question.sentence.text)
    if verb and re.search(
        rf"\byou(?:'ll| will| would|'d)? (?:\w+ )?{verb.group(1)}\b", reply, re.I
    ):
        return True
    expects = [e for e in EXPECTS if e[0].search(question.sentence.text)]
    if expects:
        return any(kinds & fact_kinds or words_.search(reply) for _, fact_kinds, words_ in expects)
    # A statement about two or more of the things the question's sentence names takes it up
    # ("my daughter ... struggling with maths, gcse in may. could you help?" -> "Maths &
    # English tutoring, GCSE and A-level").
    if any(len(meet(content_words(s.text), question.context)) >= 2 for s in statements(reply)):
        return True
    if ABOUT_THAT.match(question.sentence.text) and any(
        meet(content_words(s.text), question.context) for s in statements(reply)
    ):
        return True
    if shared:
        return True
    for asks, fact_kinds, hint in HINTS:
        if asks.search(question.sentence.text) and (
            kinds & fact_kinds or (hint is not None and hint.search(reply))
        ):
            return True
    return bool(question.yes_no and shared and _POLARITY.search(reply))


def takes_up(reply: str, question: Question, *, stance_rank: int = 0, kb: KbLines = ()) -> bool:
    """Answered, clarified, or honestly declined (`stance_rank`: see `answers`), or answered in
    the words of the KB line on its topic (`bridged`)."""
    return (
        answers(reply, question, stance_rank=stance_rank)
        or clarifies(reply, question)
        or declines(reply)
        or bridged(reply, question, kb)
    )


def left_open(reply: str, asked: list[Question], kb: KbLines = ()) -> list[Question]:
    """The questions of one customer message that `reply` does not take up, each yes/no
    question needing a position of its own; alternatives ("A or B?") are one question, open
    when neither is taken up (reported by the first)."""
    groups: list[list[Question]] = []
    for question in asked:
        if question.alternative and groups:
            groups[-1].append(question)
        else:
            groups.append([question])
    found: list[Question] = []
    rank = 0
    for group in groups:
        if not any(takes_up(reply, q, stance_rank=rank, kb=kb) for q in group):
            found.append(group[0])
        rank += any(q.yes_no for q in group)
    return found
