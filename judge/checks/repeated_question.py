"""Check: the responder asks the same question again in a later turn."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.checks.partner_contradiction import Said, customer_slots
from judge.checks.questions_per_turn import question_sentences
from judge.dialogue_acts import ASKS, PLEASE_ASK, clauses
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import split_sentences, words

# Politeness words change between re-asks without changing the question.
_FILLER = frozenset(
    words(
        "a an the please could can you your would kindly may i me us my our just also and or to "
        "of for is are do does let know what what's which tell give share provide sorry again it "
        "that this so great thanks thank ok okay now then how be will with like get take have "
        "there please lovely perfect no problem sure right at still moment currently confirm ask "
        "whether if were was thinking prefer want wish"
    )
)
# The same question: this share of its content words in common (Jaccard), or CONTAINED when
# the words of one are all in the other.
SIMILAR = 0.8
CONTAINED = 0.6
# A reworded re-ask of the same detail: "could I get a contact number" / "can I take a contact
# number for the booking", "how many passengers" / "how many people". The detail a question asks
# for, by the words that name it (synonyms folded).
_SLOTS = {
    **dict.fromkeys(words("name surname"), "name"),
    **dict.fromkeys(words("phone mobile number contact"), "phone"),
    **dict.fromkeys(words("email e-mail"), "email"),
    **dict.fromkeys(words("date day when"), "date"),
    **dict.fromkeys(words("time"), "time"),
    **dict.fromkeys(
        words("people passenger guest adult person traveller player many party size"), "people"
    ),
    **dict.fromkeys(words("address postcode"), "address"),
    **dict.fromkeys(words("service treatment appointment"), "service"),
    **dict.fromkeys(words("level course class"), "level"),
    **dict.fromkeys(words("card"), "card"),
    **dict.fromkeys(words("account reference policy"), "account"),
    **dict.fromkeys(words("reason problem issue"), "reason"),
    **dict.fromkeys(words("member membership"), "membership"),
}
# A reworded re-ask of the same detail (the same slots) shares this share of its words.
REWORDED = 0.2
# Asked this many times (a detail the customer had already given counts once more): major.
MAJOR_FROM = 3
# A bot question without a question mark (voice transcripts): an interrogative or an auxiliary
# before its subject at the start of a clause.
# A relative "what" ("here is what our information says") asks nothing.
_ASKING = re.compile(
    r"^(?:[\w']+[ ,]+){0,4}?(?<!is )(?<!'s )(?<!says )(?<!know )(?<!see )"
    r"(?P<wh>what|whats|what's|which|when|where|who|how (?:many|much|long|old))\b"
    # "apologies marcus the card's now cancelled do you still have the card with you"
    r"|^(?:[\w']+[ ,]+){0,8}?(?P<aux>(?:could|can|may|would|will|do|did|are|have) (?:i|you|we))\b"
    r"|^(?:[\w']+[ ,]+){0,4}?(?P<is>is (?:it|that|there))\b",
    re.IGNORECASE,
)
# "... before i do that can i take your full name please": the ask starts mid-sentence.
_ASKING_WITHIN = re.compile(
    r"\b(?:can|could|may) i (?:take|have|get|grab|start with|ask for|confirm|check)\b|"
    + PLEASE_ASK,
    re.I,
)


# A detail the bot asks the customer for, by how a question names it, and how the customer gives
# it. "your pet's name" or "the name of the company" ask for someone else's.
_DETAIL_ASKED = {
    "phone": re.compile(
        r"\b(?:phone|mobile|cell|telephone|contact)(?: number)?\b"
        r"|\bnumber\b[^.?!]{0,40}\b(?:reach|call|text|contact)\b",
        re.I,
    ),
    "email": re.compile(r"\be-?mail\b", re.I),
    "name": re.compile(
        r"\b(?:your|a|the) (?:full |first )?name\b(?! of)|\bname (?:for|on|under) (?:the|your)\b"
        r"|\bwho (?:am i|i'm) (?:speaking|talking) (?:to|with)\b",
        re.I,
    ),
    "party": re.compile(
        r"\bhow many (?:people|of you|guests|players|adults|persons|participants|"
        r"(?:will be )?in your (?:group|party))\b|\bparty size\b"
        r"|\bnumber of (?:people|guests|players|participants)\b",
        re.I,
    ),
    "their name": re.compile(
        r"\byour (?:\w+ )?(?:pet|dog|cat|puppy|kitten|child|son|daughter)'s name\b", re.I
    ),
    "postcode": re.compile(r"\b(?:post ?code|zip(?: code)?|postal code)\b", re.I),
    "birth": re.compile(r"\b(?:date of birth|d\.?o\.?b\b\.?|birth ?date)", re.I),
    "reference": re.compile(
        r"\b(?:order|booking|reference|ref|ticket|case|claim|policy)\s*(?:number|no\.?|#|id|"
        r"code|reference)\b|\benter (?:your |the )?order\b",
        re.I,
    ),
    "age": re.compile(
        r"\bhow old\b|\b(?:state |give |the |your )?age of (?:the |your )?(?:child|son|daughter|"
        r"kid|children)\b|\bstate (?:the |their |his |her )?age\b|\b(?:child|son|daughter)'s age\b",
        re.I,
    ),
    "address": re.compile(
        r"(?<!email )(?<!e-mail )(?<!web )\b(?:full |home |street )?address\b", re.I
    ),
}
# "Waverley Road", "7 Linden Close": a street address the customer gives.
_STREET = (
    r"\b\d{1,4}[a-z]?,? [A-Z][a-z]+(?: [A-Z][a-z]+)? (?:Road|Rd|Street|St|Close|Lane|Ln|Avenue|Ave|"
    r"Drive|Dr|Way|Court|Ct|Crescent|Place|Terrace|Gardens|Grove|Park|Square|Row|Hill|Walk)\b"
)
_GIVEN = {
    "postcode": re.compile(
        r"\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b|\b(?i:post ?code|zip(?: code)?|postal code)\b"
        r"(?: is)?:? ?([A-Z0-9][A-Z0-9 -]{2,8}\d|\d{4,5})\b"
    ),
    "birth": re.compile(
        r"\b(?:date of birth|d\.?o\.?b\b\.?|born(?: on)?)\W{0,3}(?:is\W{1,2})?\d{1,2}\W?\w+", re.I
    ),
    # "status of order QP-20931", "booking ref CLF88213".
    "reference": re.compile(r"\b[A-Z]{1,4}[-/]?\d{3,}(?:[-/][A-Z0-9]+)?\b"),
    # "my son is 10", "she's 7", "a 6 year old".
    "age": re.compile(
        r"\b(?:(?:son|daughter|child|kid|boy|girl)(?: is)?|he's|she's|he is|she is)\s+(?:aged?\s+)?"
        r"\d{1,2}\b(?![:.]\d|\s*(?:am|pm|kg|cm|m\b|miles|mins?|minutes|hours?))"
        r"|\b\d{1,2}\s*(?:years? old|yrs? old|yo|y/o|year-old)\b",
        re.I,
    ),
    "address": re.compile(_STREET),
}
# "another number", "a different email", "the new postcode": a second value, not the same one.
_ANOTHER = re.compile(
    r"\b(?:another|alternative|other|different|second|backup|new|updated|else|"
    r"landline|work|home|emergency)\b",
    re.I,
)

# "The number looks like it's missing a few digits": the value given cannot be used as it is.
_UNUSABLE = re.compile(
    r"\b(?:missing|incomplete|invalid|not valid|too (?:short|long)|in full|typo|mistake|"
    r"(?:didn't|did not|couldn't|could not|can't|cannot) (?:catch|get|find|read|match|verify|"
    r"recogni[sz]e)|doesn't (?:look|seem|match)|does not (?:look|seem|match))\b",
    re.I,
)


def _given(said: Said) -> dict[str, tuple[str, int]]:
    """Detail -> the customer's verbatim words and their turn, for the details given so far."""
    slots = {"phone": "phone", "email": "email", "party": "party", "name": "name"}
    slots |= {"full name": "surname", "their name": "other_name"}
    slots |= {detail: f"given:{detail}" for detail in _GIVEN}
    return {
        detail: (said.values[slot][1], said.values[slot][2])
        for detail, slot in slots.items()
        if slot in said.values
    }


def _record_given(text: str, turn: int, said: Said) -> None:
    """What `customer_slots` reads, and the postcode and date of birth the customer gives."""
    customer_slots(text, turn, said, {})
    for detail, pattern in _GIVEN.items():
        if m := pattern.search(text):
            said.put(f"given:{detail}", m.group(0), m.group(0), turn)


def _detail_asked(
    ask: str, reply: str, given: dict[str, tuple[str, int]]
) -> tuple[str, tuple[str, int]] | None:
    """(detail, customer's words) when `ask` asks for a detail the customer already gave and
    the reply does not read it back (a confirmation) or ask for another one."""
    if _ANOTHER.search(ask) or _UNUSABLE.search(reply):
        return None
    for detail, pattern in _DETAIL_ASKED.items():
        m = pattern.search(ask)
        if m is None or detail not in given:
            continue
        if detail == "name" and re.search(r"\b(?:full|sur|last)\s?name\b", ask, re.I):
            detail = "full name"
            if detail not in given:
                continue
        quote = given[detail][0]
        if quote.casefold() in reply.casefold() or set(words(quote)) & set(words(reply)) - _FILLER:
            return None
        return detail, given[detail]
    return None


@dataclass
class _Asked:
    tokens: frozenset[str]
    occurrences: list[tuple[int, str]] = field(default_factory=list)
    exact: bool = True

    @property
    def slots(self) -> frozenset[str]:
        return frozenset(_SLOTS[t] for t in self.tokens if t in _SLOTS)


def _ask_part(clause: str, *, asked_with_mark: bool) -> str:
    """A question without a '?' from where it starts asking ("the card's now cancelled do you
    still have the card" -> "do you still have the card"); any other clause whole."""
    m = None if asked_with_mark else _ASKING.match(clause)
    if m is None:
        return clause
    group = next(g for g in ("wh", "aux", "is") if m.group(g))
    return clause[m.start(group) :]


def _stem(word: str) -> str:
    """'suits' -> 'suit', 'numbers' -> 'number' ('address' stays)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(question: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(question) if w not in _FILLER)


def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _reworded(tokens: frozenset[str], earlier: _Asked, answers: frozenset[str]) -> bool:
    """Asks for the same detail in other words: the same slots, some shared words, and nothing
    taken from the customer's answers since (that would be a narrower follow-up: "Which date
    in March?")."""
    slots = frozenset(_SLOTS[t] for t in tokens if t in _SLOTS)
    return bool(
        slots
        and slots == earlier.slots
        and _similarity(tokens, earlier.tokens) >= REWORDED
        and not (tokens - earlier.tokens) & answers
    )


class RepeatedQuestion(Check):
    """Guarantees: a question asked in one turn and asked again (same content words after
    dropping politeness and question words and a plural 's', Jaccard >= SIMILAR) in a later
    turn yields one finding per question: minor when asked twice, major when asked MAJOR_FROM or
    more times; evidence quotes every occurrence. A combined question ("Which service would you
    like, and could you tell me your name?") is split into its clauses first, so a question
    repeated inside a longer one counts; a question without a '?' (a voice transcript) or a
    request ("Please enter your name.") counts too. A reworded re-ask of the same detail (a
    shared slot such as the party size or contact number, Jaccard >= REWORDED) counts unless it
    takes a word from the customer's answers since (a narrower follow-up)."""

    rule = Rule(
        "repeated_question",
        "minor",
        "deterministic",
        "skill",
        "The same question asked again in a later turn (content words in common: Jaccard at "
        "least {SIMILAR}, or {CONTAINED} when one's words are all in the other's; a reworded "
        "ask for the same detail from {REWORDED}), also inside a longer combined question or as "
        "a request ('Please enter your full name.'), or a detail the customer already gave "
        "asked for again.",
        action="Stop repeating questions already asked",
        severity_when={
            "major": "when asked {MAJOR_FROM} or more times (a detail the customer had already "
            "given counts once more)"
        },
        thresholds={
            "SIMILAR": SIMILAR,
            "CONTAINED": CONTAINED,
            "REWORDED": REWORDED,
            "MAJOR_FROM": MAJOR_FROM,
        },
    )

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        asked: list[_Asked] = []
        said: dict[int, frozenset[str]] = {}  # turn -> the customer's words up to that turn
        customer: frozenset[str] = frozenset()
        details = Said({})
        # detail -> (turn, question) asked after the customer gave it, and their words.
        regiven: dict[str, list[tuple[int, str]]] = {}
        given_as: dict[str, tuple[str, int]] = {}
        for turn in case.turns:
            customer |= _tokens(turn.customer)
            _record_given(turn.customer, turn.index, details)
            given = _given(details)
            said[turn.index] = customer
            matched_this_turn: set[int] = set()
            questions = question_sentences(turn.reply)
            asks = [
                _ask_part(c.text, asked_with_mark=s in questions)
                for s in split_sentences(turn.reply)
                for c in clauses(s)
                if s in questions or ASKS.match(c.text) or _ASKING.match(c.text)
            ]
            asks += [
                c.text[m.start() :]
                for s in split_sentences(turn.reply)
                if s not in questions
                for c in clauses(s)
                if not (ASKS.match(c.text) or _ASKING.match(c.text))
                and (m := _ASKING_WITHIN.search(c.text))
            ]
            for clause in asks:
                tokens = _tokens(clause)
                if not tokens:
                    continue  # "Sorry?" carries nothing to compare
                for i, earlier in enumerate(asked):
                    if i in matched_this_turn or earlier.occurrences[-1][0] == turn.index:
                        continue
                    score = _similarity(tokens, earlier.tokens)
                    # What the customer said after the earlier question was asked.
                    answers = customer - said[earlier.occurrences[-1][0]]
                    contained = (tokens <= earlier.tokens or earlier.tokens <= tokens) and min(
                        len(tokens), len(earlier.tokens)
                    ) >= 2
                    if (
                        score >= SIMILAR
                        or (contained and score >= CONTAINED)
                        or _reworded(tokens, earlier, answers)
                    ):
                        earlier.occurrences.append((turn.index, clause))
                        earlier.exact = earlier.exact and score == 1.0
                        matched_this_turn.add(i)
                        break
                else:
                    asked.append(_Asked(tokens, [(turn.index, clause)]))
                    if (known := _detail_asked(clause, turn.reply, given)) is not None:
                        detail, quote = known
                        if all(t != turn.index for t, _ in regiven.get(detail, [])):
                            regiven.setdefault(detail, []).append((turn.index, clause))
                            given_as[detail] = quote
        findings: list[Finding] = []
        asked_after_given = {occurrence for found in regiven.values() for occurrence in found}
        for question in asked:
            count = len(question.occurrences)
            if count < 2:
                continue
            first_text = question.occurrences[0][1]
            # Asked twice for a detail the customer had already given is a third time.
            if question.occurrences[0] in asked_after_given:
                count += 1
            findings.append(
                self.finding(
                    case,
                    severity="major" if count >= MAJOR_FROM else "minor",
                    turn_index=question.occurrences[-1][0],
                    subject=first_text[:200],
                    evidence=[
                        Evidence(source="reply", quote=text, turn=index)
                        for index, text in question.occurrences
                    ],
                    rationale=f"The responder asked '{first_text}' {count} times.",
                    fix_text=(
                        "Have the skill check the fields already collected and the customer's "
                        "previous answers before asking; if an answer was unclear, ask a narrower "
                        "follow-up instead of the same question."
                    ),
                    effort="S",
                    confidence=0.9 if question.exact else 0.7,
                )
            )
        # A detail asked again after it was given, and asked again after that, is one repeat.
        repeated = {turn for q in asked if len(q.occurrences) >= 2 for turn, _ in q.occurrences}
        for detail, occurrences in regiven.items():
            if {turn for turn, _ in occurrences} <= repeated:
                continue
            findings.append(
                self.finding(
                    case,
                    severity="major" if len(occurrences) + 1 >= MAJOR_FROM else "minor",
                    turn_index=occurrences[-1][0],
                    subject=occurrences[0][1][:200],
                    evidence=[
                        *(
                            Evidence(source="reply", quote=text, turn=index)
                            for index, text in occurrences
                        ),
                        Evidence(
                            source="customer", quote=given_as[detail][0], turn=given_as[detail][1]
                        ),
                    ],
                    rationale=(
                        f"The customer already gave their {detail} ('{given_as[detail][0]}'), "
                        f"but the responder asked for it again."
                    ),
                    fix_text=(
                        "Have the skill fill its fields from everything the customer has said "
                        "so far, including details given before they were asked for."
                    ),
                    effort="S",
                    confidence=0.7,
                )
            )
        return findings
