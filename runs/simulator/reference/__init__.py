"""The built-in `reference` responder: a small retrieval-grounded booking assistant.

It is the demo bot and the base for canaries, so it behaves like a decent production bot:
it answers from passages it retrieved from the case's fixture KB (BM25), quotes rather than
invents, says plainly when the KB does not cover something, refuses prompt injection and
discount pressure, never gives safety advice, collects the required intake fields at most two
at a time, and reports `COMPLETE` once a booking request has every required field.

It talks to people, not forms: it reads dates and times as they are said ("next Tuesday",
"around 11") and reads them back in the customer's own words, answers a question asked
alongside an answer, acknowledges a change of mind, suggests services to a customer who is
not sure what they need instead of asking the same question again, answers a "does that also
apply to ...?" about the policy it just quoted, declines honestly in words that fit the
question asked ("I can't say whether there is a waiting list", not "I can't quote a price"),
and returns thanks with thanks. It never quotes text written for staff or for the bot (the
team's working instructions, internal emails, handover notes, "Collect full name ..."), and
quotes the KB with its typing slips corrected to the KB's own usual spelling.

With the offline engine the reply is composed by rules from the retrieved passages; the engine
meters what a model would have read (instructions, passages, recent history) and written.
"""

from __future__ import annotations

from runs.simulator.reference.booking import mid_sentence
from runs.simulator.reference.kb_text import days_covered, service_names
from runs.simulator.reference.questions import info_questions
from runs.simulator.reference.respond import MAX_TOKENS, PROMPT, reference_respond

__all__ = [
    "MAX_TOKENS",
    "PROMPT",
    "days_covered",
    "info_questions",
    "mid_sentence",
    "reference_respond",
    "service_names",
]
