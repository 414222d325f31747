"""Check: a reply that contradicts what the customer said earlier (name, phone, email, day,
date, time)."""

from __future__ import annotations

import functools
import re

from generator.schemas import Manifest
from judge.arithmetic import RESULT
from judge.checks.base import Check, Rule
from judge.customer_details.days import (
    DAYS,
    MONTHS,
    calendar_dates,
    day_name,
    days_of_month,
    ends_range,
    range_end,
    role_days,
    weekdays_in,
)
from judge.customer_details.names import ADDRESS, NAMED, NOT_NAMES, people_named
from judge.customer_details.numbers import (
    CODE,
    code_shape,
    figure_tokens,
    numbers_said,
    party_conflict,
    party_counts,
    quantities,
)
from judge.customer_details.slots import (
    Said,
    catalog,
    customer_slots,
    item_span,
    mentioned_items,
)
from judge.facts import extract_facts, loose_hours, phone_digits, time_variants
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import ANY_WEEKDAY, Sentence, sentence_at, split_sentences

# A restating sentence may also say other things: "We're closed on Sunday; Saturday is booked."
_CLAUSE = re.compile(
    r"[;,:]\s+|\s+[—–-]\s+|\s+(?:but|and|although|while|whereas)\s+", re.IGNORECASE
)
# A clause with a verb of its own says something new; one without ("Booked: Semi-private,
# Tuesday 18:00", "for the Garden Room, Saturday 15th and Sunday 16th") continues the last.
_OWN_VERB = re.compile(
    r"\b(?:is|are|was|were|be|'s|'re|isn't|aren't|open|opens|close|closes|closed|work|works|"
    r"have|has|do|does|don't|can|can't|will|won't|would|could|should|must|need|needs|runs?|"
    r"starts?|ends?|fits?|suits?|we|i|you|they|it)\b",
    re.IGNORECASE,
)
# A sentence that restates the booking: a day or time there is the customer's, not the hours.
_RESTATES = re.compile(
    r"\b(?:book|booked|booking|reserv|schedul|confirm|appointment|see you|you said|you mentioned|"
    r"you asked|your (?:visit|slot|appointment|booking|reservation|request|table|session|class|"
    r"move|order|delivery|trip|stay|event|party|collection|install|installation|lesson|course)|"
    r"pencil|noted|(?:i'll|i will|i've|let me) note|put (?:you|u) down|passed on|request|"
    r"for you on|"
    r"lined up|set for|all set|arriv|collecting|collection on\b|pick(?:ing)? (?:it )?up on|"
    r"so that's|that's a|to confirm|just to confirm|summary|submitted|logged|registered|"
    r"updated|changed|moved|for your (?:trip|stay|visit|day|journey|order)|"
    # A read-back: "I have you down for ...", "thank you, I have the fourteenth of May".
    r"(?:have|got) you down|\bi have (?:the|your)\b"
    rf"|your {ANY_WEEKDAY}"
    # A slot read back as a day and a time: "Wax & tint combo, Saturday 12pm."
    # (Not hours: "Sat 9am-5pm", "Monday-Friday 7am-1pm".)
    rf"|(?<![–—-])(?<![–—-] )(?<!to ){ANY_WEEKDAY},?\s+(?:at\s+)?\d{{1,2}}(?:[:.]\d{{2}})?\s*"
    r"(?:am|pm)\b(?!\s*(?:[–—-]|to|till|until)\s*\d))",
    re.IGNORECASE,
)


def restating_clauses(sentence: str) -> list[str]:
    """The clauses of a sentence that restate the booking: those with a restating word and the
    verbless ones that continue them."""
    out: list[str] = []
    carrying = False
    for clause in _CLAUSE.split(sentence):
        carrying = bool(_RESTATES.search(clause)) or (carrying and not _OWN_VERB.search(clause))
        if carrying:
            out.append(clause)
    return out


_WORKED_OUT = re.compile(
    r"\b(?:brings? (?:it|that|the total) to|makes? (?:it|that)|comes? to|in total|total of|"
    r"altogether|adds? up to)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=64)
def _kb_quantities(kb: str) -> dict[str, dict[int, str]]:
    """The KB's own quantities, read once per KB (not per turn)."""
    return quantities(kb)


@functools.lru_cache(maxsize=64)
def _kb_values(kb: str) -> tuple[frozenset[str], frozenset[str]]:
    """The clock times and amounts the KB states, read once per KB (not per turn)."""
    facts = extract_facts(kb)
    times = frozenset(f.value for f in facts if f.kind == "time") | loose_hours(kb)
    money = frozenset(f.value for f in facts if f.kind == "money")
    return times, money


_HOURS_WORD = re.compile(
    r"\b(?:open|opens|opening|close|closes|closing|closed|until|till|from|hours|last (?:entry|"
    r"admission|orders?|wash|booking)|check-?in|check-?out|departs?|departure|sailing)\b",
    re.IGNORECASE,
)


def _transposed(
    reply: str, sentences: list[Sentence], kb: str, customer: str
) -> list[tuple[str, str, str]]:
    """A number or code the customer gave, read back with its characters transposed
    ("40017723" -> "40071723", "HX7QPL" -> "HX7PQL", "$540k" -> "$450,000")."""
    theirs = figure_tokens(customer)
    known = set(theirs) | set(figure_tokens(kb))
    out: list[tuple[str, str, str]] = []
    for key, raw in figure_tokens(reply).items():
        if key in known:
            continue
        for their_key, their_raw in theirs.items():
            if len(key) == len(their_key) and sorted(key) == sorted(their_key):
                at = reply.find(raw)
                sentence = sentence_at(sentences, at) if at >= 0 else None
                out.append((f"number {their_raw}", raw, sentence.text if sentence else reply))
                break
    return out


def _conflicts(
    reply: str, said: Said, kb: str, customer: str, items: dict[str, frozenset[str]]
) -> list[tuple[str, str, str]]:
    """(slot, what the reply says, sentence) for each restated value that differs."""
    out: list[tuple[str, str, str]] = []
    sentences = split_sentences(reply)
    name = said.values.get("name")
    surname = said.values.get("surname")
    if name and surname:
        # "Thanks, Siobhan Kelleher" for Siobhan Kelly: the first name right, the surname not.
        full = re.compile(rf"\b{re.escape(name[1].split()[0])}\s+([A-Z][a-zA-Z'\-]+)")
        for m in full.finditer(reply):
            if m.group(1).casefold() != surname[0] and m.group(1).casefold() not in NOT_NAMES:
                sentence = sentence_at(sentences, m.start(1))
                out.append(("surname", m.group(1), sentence.text if sentence else reply))
    if name:
        for m in ADDRESS.finditer(reply):
            word = m.group(1)
            if word.casefold() in NOT_NAMES or word.casefold() == name[0]:
                continue
            if word.casefold() in f"{kb}\n{customer}".casefold() or word.casefold() in DAYS:
                continue
            if word[0].isupper() and len(word) > 2 and not word.isupper():
                sentence = sentence_at(sentences, m.start(1))
                out.append(("name", word, sentence.text if sentence else reply))
    kb_times, kb_money = _kb_values(kb)
    for fact in extract_facts(reply):
        if fact.kind not in ("phone", "email", "time") or fact.kind not in said.values:
            continue
        value, _, _ = said.values[fact.kind]
        sentence = sentence_at(sentences, fact.start)
        text = sentence.text if sentence else reply
        if fact.kind == "time":
            if range_end(reply, fact.start):
                continue  # "18:00-19:30" for the customer's 6pm: the slot's end
            restating = restating_clauses(text)
            # "9-10am" then "the 10-11 slot": a loosely named hour the customer said counts;
            # "6:30" said without am/pm is also 18:30.
            if not any(reply[fact.start : fact.end] in c for c in restating):
                continue
            if time_variants(fact) & (set(value.split("|")) | loose_hours(customer)):
                continue
            # A business time from the KB ("we close at 18:00") is no restatement; a KB slot
            # booked instead of the customer's time is.
            if time_variants(fact) & kb_times and _HOURS_WORD.search(text):
                continue
            # "Journey time is 1h 50m, so arrival is around 19:20": worked out, not restated.
            if RESULT.search(text[: fact.start - (sentence.start if sentence else 0)]) and any(
                f.kind == "duration" for f in extract_facts(text)
            ):
                continue
        if fact.kind == "phone":
            # The same number in another format, or a business number from the KB.
            digits = phone_digits(fact.value)
            if digits[-7:] == phone_digits(value)[-7:] or digits in phone_digits(kb):
                continue
        elif fact.value == value or reply[fact.start : fact.end] in kb:
            continue
        out.append((fact.kind, reply[fact.start : fact.end], text))
    amounts = [v for slot, v in said.values.items() if slot.startswith("amount:")]
    for fact in extract_facts(reply):
        if (
            fact.kind != "money"
            or fact.value in kb_money
            or any(fact.value == a[0] for a in amounts)
        ):
            continue
        # "$1,430" for the customer's "$1,340": their own figure with its digits swapped.
        digits = re.sub(r"\D", "", fact.value)
        for value, _quote, _ in amounts:
            theirs = re.sub(r"\D", "", value)
            if len(digits) >= 3 and sorted(digits) == sorted(theirs):
                sentence = sentence_at(sentences, fact.start)
                out.append(
                    (
                        f"amount:{value}",
                        reply[fact.start : fact.end],
                        sentence.text if sentence else reply,
                    )
                )
                break
    out += _transposed(reply, sentences, kb, customer)
    # A quantity read back with a number the customer never said ("40 pallets" -> "14
    # pallets", "flat fourteen" -> "flat 40"); one the KB states is the business's own.
    given = numbers_said(customer)
    kb_quantities = _kb_quantities(kb)
    known = f"{kb}\n{customer}".casefold()
    for slot, numbers in quantities(reply).items():
        held = said.values.get(slot)
        # A reply naming theirs among others ("in 1.25mg, 2.5mg and 5mg") lists options.
        if not held or set(held[0].split("|")) & {str(n) for n in numbers}:
            continue
        business = kb_quantities.get(slot, {})
        wrong = [
            quote
            for n, quote in numbers.items()
            if n not in given and n not in business and quote.casefold() not in known
        ]
        if not wrong:
            continue
        sentence = sentence_at(sentences, reply.find(wrong[0]))
        text = sentence.text if sentence else reply
        # "that brings it to 9 visits": a count worked out, not the customer's read back.
        if not _WORKED_OUT.search(text[: max(0, text.find(wrong[0]))]):
            out.append((slot, wrong[0], text))
    for sentence in sentences:
        if not _RESTATES.search(sentence.text):
            continue
        clauses = restating_clauses(sentence.text)
        for slot, found in (
            ("day", {day_name(m.group(1)): m.group(0) for c in clauses for m in weekdays_in(c)}),
            (
                "date",
                dict(d for c in clauses for d in calendar_dates(c) if not ends_range(c, d[1])),
            ),
            ("day_of_month", dict(d for c in clauses for d in days_of_month(c))),
        ):
            held = said.values.get(slot)
            if not held or not found:
                continue
            other = [quote for value, quote in found.items() if value not in held[0].split("|")]
            if other:
                out.append((slot, other[0], sentence.text))
        for clause in clauses:
            for role, day, quote in role_days(clause):
                held_role = said.values.get(f"{role} day")
                if held_role and held_role[0] != day:
                    out.append((f"{role} day", quote, sentence.text))
        for m in CODE.finditer(sentence.text):
            held_code = said.values.get(f"code:{code_shape(m.group(0))}")
            if held_code and held_code[0] != m.group(0) and m.group(0) not in kb:
                out.append((f"code:{code_shape(m.group(0))}", m.group(0), sentence.text))
        held_party = said.values.get("party")
        wrong = party_conflict(held_party[0], party_counts(sentence.text)) if held_party else None
        if wrong:
            out.append(("party", wrong, sentence.text))
        held_other = said.values.get("other_name")
        if held_other:
            for m in NAMED.finditer(sentence.text):
                word = m.group(1) or m.group(2)
                known = f"{kb}\n{customer}".casefold()
                if word.casefold() in known or word.casefold() in NOT_NAMES:
                    continue
                if word.casefold() in DAYS or word[:3].casefold() in MONTHS:
                    continue
                out.append(("other_name", word, sentence.text))
                break
        held_person = said.values.get("person")
        if held_person and held_person[0] not in sentence.text.casefold():
            for person in people_named(" ".join(clauses)):
                if person.casefold() not in f"{customer}\n{held_person[0]}".casefold():
                    out.append(("person", person, sentence.text))
                    break
        held_item = said.values.get("item")
        restated = mentioned_items(sentence.text, items)
        if (
            held_item
            and restated
            and not set(restated) & set(held_item[0].split("|"))
            # the customer's own words for it, said back, are no other choice
            and held_item[1].casefold() not in sentence.text.casefold()
        ):
            # The reply's words for the item (a catalog name need not be spelled as such).
            out.append(("choice", item_span(sentence.text, restated[:1], items), sentence.text))
    return out


class PartnerContradiction(Check):
    """Guarantees: tracks the customer's latest name, phone, email, weekday, calendar date and
    time (a later correction replaces the earlier value); a major finding per reply that
    restates one of them differently: addresses them by another name, reads back another phone
    number or email, or confirms another day, date or time in a booking sentence. Values the KB
    holds (the business's own phone, its opening days) are never read as the customer's."""

    rule = Rule(
        "partner_contradiction",
        "major",
        "deterministic",
        "skill",
        "A reply restates the customer's name, phone, email, day, date or time differently from "
        "what the customer last said.",
        action="Read back the customer's details as they gave them",
    )

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        said = Said({})
        kb = case.fixture.text
        items = catalog(case, manifest)
        findings: list[Finding] = []
        customer_text = ""
        for turn in case.turns:
            customer_slots(turn.customer, turn.index, said, items)
            customer_text += "\n" + turn.customer
            conflicts = _conflicts(turn.reply, said, kb, customer_text, items)
            if not conflicts:
                continue
            slot, stated, sentence = conflicts[0]
            if slot.startswith("number "):
                # A transposed number: the customer's own, from the turn that gave it.
                quote = slot.removeprefix("number ")
                said_turn = next(t.index for t in case.turns if quote in t.customer)
                slot = "number"
            else:
                _, quote, said_turn = said.values["item" if slot == "choice" else slot]
            findings.append(
                self.finding(
                    case,
                    turn_index=turn.index,
                    subject=stated,
                    evidence=[
                        Evidence(source="reply", quote=sentence, turn=turn.index),
                        Evidence(source="customer", quote=quote, turn=said_turn),
                    ],
                    rationale=(
                        f"The customer gave their {slot} as '{quote}', but the reply says "
                        f"'{stated}'."
                    ),
                    fix_text=(
                        "Have the assistant read intake details back from what the customer "
                        "said last (keeping corrections), never from an earlier or invented value."
                    ),
                    effort="S",
                    confidence=0.8,
                )
            )
        return findings
