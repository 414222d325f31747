"""The kind of fact a question asks for ("how much", "how long", "when" ...) and the fact
kinds and words that answer it."""

from __future__ import annotations

import re

from judge.text import ANY_WEEKDAY

# A weekday, without the named groups (a hint pattern may hold it beside others).
_DAY = r"\b" + ANY_WEEKDAY

# Questions that ask for one kind of fact ("how much", "how long", "what time") are answered by
# that kind of fact (judge.facts kinds) or its words, not by sharing their topic words: "How
# long do highlights take?" is not answered by "Highlights are £95".
# A span that says when: "within 5 days", "in 2 weeks", "after 6 months" (a bare "(6-18
# months)" is an age band, not an answer to "when does the next term start?").
WHEN_SPAN = "span"
SPAN_LEAD = re.compile(
    r"\b(?:in|within|after|takes?|taking|up to|around|about|approx\w*|roughly|next|every|for|"
    r"under|over|least)\s+(?:a |an |the |\w+ )?$",
    re.IGNORECASE,
)
# "Final numbers are due 4 weeks before the event".
SPAN_TRAIL = re.compile(
    r"\s*(?:before|after|ahead|prior|beforehand|in advance|later|earlier|from)\b", re.I
)
EXPECTS: tuple[tuple[re.Pattern[str], frozenset[str], re.Pattern[str]], ...] = (
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
        frozenset({"time", WHEN_SPAN}),
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


# Looser cues: a question about prices, durations, hours or contacts counts as answered by such
# a fact ("u open on Wednesday?" -> "Mon-Thu: 08:30 to 18:00"), though it needs none.
HINTS: tuple[tuple[re.Pattern[str], frozenset[str], re.Pattern[str] | None], ...] = (
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
