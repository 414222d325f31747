"""What a customer turn asks and whether a reply takes it up: shared by `ignored_question` and
`irrelevant_reply`.

Deliberately lexical and conservative: a reply counts as taking a question up when it answers
with the kind of fact the question asks for (a price for "how much", a time for "when"), when
it shares the question's content words, when it answers yes or no, asks back to clarify, or
declines honestly. Only a reply that does none of these is treated as not addressing it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from judge.facts import extract_facts
from judge.text import ANY_WEEKDAY, Sentence, split_sentences, words

# Function words and chat filler: never the topic of a question.
STOP = frozenset(
    words(
        "a an the and or but if so to of in on at for from by with about as into than then there "
        "here this that these those it its it's is are was were be been being am do does did done "
        "have has had having can could would should will shall may might must i i'm i'd i've me my "
        "mine we we're our ours us you you're your yours u ur he she they them their what which "
        "who whom whose when where why how whether not no yes yeah yep ok okay oh hi hello hey "
        "thanks thank please pls just also too very really some any all more most much many lot "
        "lots get got go going want wanna need like would'd know tell let say said one ones "
        "thing things something anything bit kind sort well still again now soon today maybe "
        "actually quick question hmm um uh sure great good fine cool alright right her him his "
        "hers she he its they'll we'll you'll i'll it'll she'll he'll up down out off over else "
        "anyone someone everyone everything"
    )
)
# A weekday, without the named groups (a hint pattern may hold it beside others).
_DAY = r"\b" + ANY_WEEKDAY
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
_WH_VERB = re.compile(
    r"\b(?:what|which|how much|how many)\b.*\b(?:do|should|can|must) (?:i|we) (\w{3,})\b", re.I
)
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
_POLARITY = re.compile(
    r"\b(?:yes|yeah|yep|no|nope|not|n't|sure|of course|certainly|absolutely|definitely|indeed|"
    r"unfortunately|sadly|afraid|only|always|never|closed|open|available|unavailable|included|"
    r"applies|apply|does|do|can|cannot|can't|we are|we're|we have|we do|we offer|you can|you'll|"
    r"you will|you need|you don't|there is|there's|there are)\b",
    re.IGNORECASE,
)
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
# "Sorry, collection only" / "Sorry, the minimum age is 8": an apology that states a limit.
_SORRY_NO = re.compile(
    r"^\W*(?:sorry|apologies)\b[^.!?]{0,80}?\b(?:no|not|n't|only|minimum|maximum|too|cannot|"
    r"unable)\b",
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
# "What does that involve?": a question about what was just said takes its topic from the
# customer's whole message.
_ABOUT_THAT = re.compile(
    r"^\W*(?:so\s+|and\s+|ok\s+)?(?:what|how)\b.*\b(?:that|it|this|those|these)\b", re.I
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

# Questions that ask for one kind of fact ("how much", "how long", "what time") are answered by
# that kind of fact (judge.facts kinds) or its words, not by sharing their topic words: "How
# long do highlights take?" is not answered by "Highlights are £95".
# A span that says when: "within 5 days", "in 2 weeks", "after 6 months" (a bare "(6-18
# months)" is an age band, not an answer to "when does the next term start?").
_WHEN_SPAN = "span"
_SPAN_LEAD = re.compile(
    r"\b(?:in|within|after|takes?|taking|up to|around|about|approx\w*|roughly|next|every|for|"
    r"under|over|least)\s+(?:a |an |the |\w+ )?$",
    re.IGNORECASE,
)
# "Final numbers are due 4 weeks before the event".
_SPAN_TRAIL = re.compile(
    r"\s*(?:before|after|ahead|prior|beforehand|in advance|later|earlier|from)\b", re.I
)
_EXPECTS: tuple[tuple[re.Pattern[str], frozenset[str], re.Pattern[str]], ...] = (
    (
        re.compile(
            # ("how much notice" asks for a span.)
            r"\bhow much\b(?!\s+(?:notice|time|longer|warning|data|space|room|luggage|weight))|"
            r"\b(?:price|prices|cost|costs|fee|fees|charge|charges|charged|paying|"
            r"pay|free|owe|refund|money back|compensation|total)\b|\bhow (?:expensive|cheap)\b|"
            # The same asked in the customer's own language: "combien ça coûte", "wat kost
            # dat", "wie viel kostet", "cuánto cuesta", "quanto costa", "ile kosztuje".
            r"\b(?:combien(?! de temps)|wat kost|hoeveel kost|wie ?viel|was kostet|cu[aá]nto "
            r"(?:cuesta|vale|es)|quanto (?:costa|custa|è)|ile kosztuje|prix|precio|prezzo|preis|"
            r"prijs|kosten?)\b",
            re.I,
        ),
        frozenset({"money", "percent"}),
        re.compile(
            r"\b(?:free|no charge|no cost|no fee|nothing to pay|pay nothing|included|depends|"
            r"quote[sd]?|varies|euro|pounds?|dollars?|refund\w*|charge[sd]?|fees?|costs?|"
            r"payable)\b",
            re.I,
        ),
    ),
    (
        re.compile(
            r"\bhow (?:long|quickly|fast|soon)\b|\bhow many (?:minutes|hours|days|weeks)\b|"
            r"\bhow much (?:notice|time|longer|warning)\b|"
            r"\bduration\b|\bcombien de temps\b|\bhoe lang\b|\bwie lange?\b|"
            r"\bcu[aá]nto tiempo\b|\bquanto tempo\b|\bjak d[lł]ugo\b",
            re.I,
        ),
        frozenset({"duration", "time"}),
        re.compile(
            r"\b(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|half an hour|an hour|"
            r"quick|depends|varies)\b",
            re.I,
        ),
    ),
    (
        re.compile(
            r"\bwhat times?\b|\b(?:until|till) when\b|\bwhen (?:do|does|are|is|can|will)\b|"
            r"\bopening (?:hours|times)\b",
            re.I,
        ),
        frozenset({"time", _WHEN_SPAN}),
        re.compile(
            _DAY + r"|\b(?:today|tomorrow|weekend|weekday|within|immediately|straight away|"
            r"as soon as|same day|next day|from day|once|"
            r"morning|afternoon|evening|noon|midday|closed|open|anytime|any time|daily|"
            r"o'?clock|\d{1,2}(?:am|pm)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
            r"\d{1,2}(?:st|nd|rd|th)|next (?:week|month))\b",
            re.I,
        ),
    ),
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


# Looser cues: a question about prices, durations, hours or contacts counts as answered by such
# a fact ("u open on Wednesday?" -> "Mon-Thu: 08:30 to 18:00"), though it needs none.
_HINTS: tuple[tuple[re.Pattern[str], frozenset[str], re.Pattern[str] | None], ...] = (
    (
        re.compile(
            r"\b(?:price|cost|costs|fee|fees|charge|rate|rates|pay|cheap|cheaper|expensive|"
            r"dearer|more|extra|less)\b",
            re.I,
        ),
        frozenset({"money", "percent"}),
        None,
    ),
    (
        re.compile(
            r"\b(?:when|until|till|open|opening|close|closing|hours|available|availability|"
            r"slot|slots|weekends?|weekdays?)\b",
            re.I,
        ),
        frozenset({"time"}),
        re.compile(
            _DAY + r"|\b(?:today|tomorrow|weekend|weekday|"
            r"morning|afternoon|evening|closed|open|available|daily)\b",
            re.I,
        ),
    ),
    (
        re.compile(r"\b(?:phone|number|call|email|e-mail|contact|website|address|where)\b", re.I),
        frozenset({"phone", "email", "url"}),
        re.compile(
            r"\b(?:street|road|avenue|lane|floor|located|find us|next to|near|entrance|building|"
            r"opposite|behind|beside|corner|upstairs|downstairs|takes place|held (?:in|at)|"
            r"car park|directions|map)\b",
            re.I,
        ),
    ),
    (
        re.compile(r"\b(?:age|ages|old|young|aged|too young|too old)\b", re.I),
        frozenset(),
        re.compile(
            r"\b(?:under|over|aged?|from|minimum age|min\.? age)\s?\d{1,2}\b|\b\d{1,2}\s?(?:\+|and "
            r"(?:over|under|up)|or (?:older|over|younger|under)|years? old|yo)\b",
            re.I,
        ),
    ),
    (
        re.compile(r"\b(?:what|which) size\b|\bhow (?:big|large|small)\b", re.I),
        frozenset(),
        re.compile(
            r"\b(?:sq\.? ?ft|square (?:feet|foot|met(?:re|er)s?)|m²|m2|cm|mm|inch(?:es)?|litres?|"
            r"liters?|kg|small|medium|large|xl|size[sd]?)\b",
            re.I,
        ),
    ),
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


_STEM_CHARS = 6
_SLOT_WORD = re.compile(
    r"mon(?:day)?|tues?(?:da)?|wed(?:nes)?|thu(?:rs?d?)?|fri(?:day)?|sat(?:urd)?|sun(?:day)?|"
    r"\d{1,2}(?::?\d{2})?(?:am|pm)?|\d{1,2}(?:st|nd|rd|th)|"
    r"morning|aftern|evenin|tonigh|tomorr|next|week|weeken",
    re.IGNORECASE,
)


# "tues the 3rd around 11?": words that only soften a proposed slot.
_ROUGHLY = frozenset({"around", "about", "ish", "approx", "roughly", "earliest", "latest"})


_SIBILANT_ES = re.compile(r"(?:[sxz]|ch|sh)es$")


def stem(word: str) -> str:
    """A light stem cut to six letters, so 'prices' meets 'price', 'booking' meets 'book' and
    'cancellation' meets 'cancelled'."""
    for suffix in ("ings", "ing", "ies", "es", "s", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            if suffix == "es" and not _SIBILANT_ES.search(word):
                suffix = "s"  # "bikes" is "bike" + s, "boxes" and "watches" take "es"
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:_STEM_CHARS]


# Words any customer-service question may carry: they say nothing about its topic.
_GENERIC = frozenset(
    stem(w)
    for w in words(
        "book booking appointment before after first policy policies service services info "
        "information question questions help ask asking wonder wondering possible available "
        "option options happen happens mean means way place day time"
    )
)


_COMPOUND = re.compile(r"\b([a-z]+)-([a-z]+)\b")
_HELP = frozenset({"help", "possib", "doable", "ok", "okay", "fine", "work"})
# Words a customer and a bot use for one thing: "am I too old?" / "age 8+".
_KINDRED = tuple(
    frozenset(stem(w) for w in words(group))
    for group in (
        "old young age aged",
        "kid kids child children childrens daughter daughters son sons baby toddler teen "
        "teenager junior juniors",
        "cost costs price prices fee fees charge",
        "bag bags backpack luggage suitcase rucksack",
        "car cars vehicle vehicles",
        "call calls ring phone telephone reach",
        "pet pets dog dogs cat cats",
        "deliver delivery collection collect pickup",
        "house home homes flat apartment",
        "dress wear clothes clothing attire shirt shirts shorts trousers jeans denim shoes",
    )
)


def kindred(found: frozenset[str]) -> frozenset[str]:
    """`found` with the kindred words of each of its words."""
    extra = {w for group in _KINDRED if found & group for w in group}
    return found | extra


def content_words(text: str) -> frozenset[str]:
    """Stemmed content words of `text` (no function words, no bare numbers); a hyphenated
    compound also counts joined ("E-bike" meets "ebike")."""
    found = {stem(w) for w in words(text) if w not in STOP and not w.isdigit()}
    found |= {stem(a + b) for a, b in _COMPOUND.findall(text.casefold())}
    return frozenset(found)


def topic_words(text: str) -> frozenset[str]:
    """What a question is about: its content words less the ones every question carries (all
    of them when nothing else is left)."""
    found = content_words(text)
    return (found - _GENERIC) or found


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
            bool(_ABOUT_THAT.match(body))
            or own <= _HELP
            or (yes_no and len(own) <= 1 and bool(_PRONOUN.search(body)))
        )
        # "Thursday 6pm?" proposes a slot: a request to book it.
        request = request or bool(
            own
            and not (inverted or _INTERROGATIVE.match(body) or _WH.search(body))
            and any(_SLOT_WORD.fullmatch(w) for w in own)
            and all(_SLOT_WORD.fullmatch(w) or w in _ROUGHLY for w in own)
        )
        found.append(
            Question(
                sentence=sentence,
                topic=kindred(own),
                yes_no=yes_no,
                advice=bool(_ADVICE.search(body)),
                request=request,
                context=kindred(content_words(text if about_message else whole.text) - _GENERIC),
                alternative=alternative,
            )
        )
    return found


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
        and any(_SLOT_WORD.fullmatch(w) for w in question.topic)
        and proceeds(reply, strictly=True)
    ):
        return True
    if _ABOUT_BOT.search(asked) and _SELF_DESCRIBED.search(reply):
        return True
    said = statements(reply)
    facts = extract_facts(reply)
    kinds = {f.kind for f in facts} | {
        _WHEN_SPAN
        for f in facts
        if f.kind == "duration"
        and (
            _SPAN_LEAD.search(reply[max(0, f.start - 24) : f.start])
            or _SPAN_TRAIL.match(reply[f.end : f.end + 24])
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
    expects = [e for e in _EXPECTS if e[0].search(question.sentence.text)]
    if expects:
        return any(kinds & fact_kinds or words_.search(reply) for _, fact_kinds, words_ in expects)
    # A statement about two or more of the things the question's sentence names takes it up
    # ("my daughter ... struggling with maths, gcse in may. could you help?" -> "Maths &
    # English tutoring, GCSE and A-level").
    if any(len(meet(content_words(s.text), question.context)) >= 2 for s in statements(reply)):
        return True
    if _ABOUT_THAT.match(question.sentence.text) and any(
        meet(content_words(s.text), question.context) for s in statements(reply)
    ):
        return True
    if shared:
        return True
    for asks, fact_kinds, hint in _HINTS:
        if asks.search(question.sentence.text) and (
            kinds & fact_kinds or (hint is not None and hint.search(reply))
        ):
            return True
    return bool(question.yes_no and shared and _POLARITY.search(reply))


def meet(topic: frozenset[str], other: frozenset[str]) -> set[str]:
    """The words of `topic` that `other` has, a word inside another counting ("fuel" is in
    "refuel", "tyre" in "tyres", "shar" (sharing) in "share"), and a typo of five letters or
    more too ("tutuor" meets "tutor", "recieve" "receive")."""
    return {
        t
        for t in topic
        if any(
            t == w or (len(t) >= 4 and t in w) or (len(w) >= 4 and t.startswith(w)) or typo_of(t, w)
            for w in other
        )
    }


_TYPO_LENGTH = 5


def typo_of(a: str, b: str) -> bool:
    """`a` and `b` (five letters or more) differ by one letter left out or added, or two
    neighbouring letters swapped: the slips of typing, not another word ("prize" is no typo of
    "price")."""
    if min(len(a), len(b)) < _TYPO_LENGTH or a == b:
        return False
    if len(a) == len(b) == _STEM_CHARS:
        # Stems are cut to six letters, so a letter left out shows as a shift: "sesion" and
        # "sessio" (session).
        cut = len(a) - 1
        if any(a[:i] + a[i + 1 :] == b[:cut] or b[:i] + b[i + 1 :] == a[:cut] for i in range(cut)):
            return True
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and (a[diff[1]] == b[diff[0]])
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(long_) - len(short) != 1:
        return False
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


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
    if not kb or not question.topic or any(e[0].search(question.sentence.text) for e in _EXPECTS):
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
