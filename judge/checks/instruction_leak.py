"""Check: a reply that reads out directive text meant for the bot or its staff."""

from __future__ import annotations

import re
from collections.abc import Sequence

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.dialogue_acts import stem
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import Sentence, split_sentences, words

# Verbs a business gives its assistant or staff, never its customers: "Collect full name ...",
# "Offer an emergency appointment ...", "Quote only prices from the price list".
_STAFF_VERBS = (
    "collect|gather|capture|offer|quote|upsell|cross-sell|escalate|greet|diagnose|redirect|"
    "route|transfer|verify|mention|promote|push|recommend|suggest|remind|ask|tell|inform|"
    "respond|reply|answer|refuse|decline|deflect|apologi[sz]e|confirm|refer|flag|handle|assume|"
    "pretend|behave|avoid|say|give"
)
_VERB_LIST = tuple(v for v in _STAFF_VERBS.split("|") if v.isalpha() and len(v) >= 5)
# A verb that opens a sentence as a command, not as a label ("Address: 218 Oak Street").
_IMPERATIVE = re.compile(
    rf"^(?:(?:always|never|only|do not|don't|please|politely|first|then|also)\s+)*"
    rf"(?:{_STAFF_VERBS})\b(?!\s*[:\-–|(])",
    re.IGNORECASE,
)
_PROHIBITION = re.compile(
    rf"^(?:never|do not|don't|avoid)\s+(?:\w+\s+)?(?:{_STAFF_VERBS}|diagnose|discuss|reveal|"
    rf"share|disclose|promise|guarantee|make|invent|speculate)\b",
    re.IGNORECASE,
)
# The third party a directive talks about: the customer seen from the business's side.
_THIRD_PARTY = re.compile(
    r"\b(?:the|a|each|every|all|any)\s+(?:customer|client|patient|caller|user|guest|visitor|"
    r"member|lead|prospect|student|pupil|learner|owner|passenger|tenant|resident|diner|buyer|"
    r"shopper|applicant|enquirer|requester|parent|guardian)s?\b(?!\s+of\s+(?:staff|the|our)\b)"
    r"|\b(?:customers|clients|patients|callers|users|guests)\b",
    re.IGNORECASE,
)
# Conversation mechanics only an assistant's brief talks about.
_MECHANICS = re.compile(
    r"\b(?:per (?:message|reply|turn|response)|before confirming|booking request|the price "
    r"list|questions? per|in (?:under|less than) \d+ words|this conversation|the conversation|"
    r"the chat|the bot|the assistant|system prompt|instructions?|persona|tone|in character|"
    r"knowledge base|the kb)\b",
    re.IGNORECASE,
)
# Configuration text: "You are Ava, a friendly assistant for ...", "Your role is ...".
_CONFIG = re.compile(
    # A label meant for the bot or staff: "SYSTEM: You are ...", "Internal: always push ..."
    r"^\W*(?:system|developer|internal(?: note)?|staff(?: only| note)?|note to (?:staff|self|"
    r"agents?))\s*(?::|[–—-]\s)|"
    # "... [staff note: landlord does NOT accept pets - redirect ...]" inside a sentence.
    r"[\[(]\s*(?:staff|internal|agent|admin|team|ops)(?: only| notes?| use)?\s*[:\-–—]|"
    r"\[\s*(?:bot |system )?config(?:uration)?\s*\]|"
    # "Agent note: customer sounds anxious", "Customer mood: irritated", "Refund risk: high".
    r"\b(?:agent|staff|internal|admin|ops|handover|team) notes?\s*:|"
    r"\b(?:customer|caller|client) (?:mood|sentiment|temperament|tone)\s*:|"
    r"\b(?:refund|churn|fraud|escalation|complaint) risk\s*:|"
    r"\b(?:you are (?:an? |the )?(?:[A-Z][a-z]+, )?(?:an? |the )?(?:[\w&'’.-]+ ){0,4}"
    r"(?:assistant|agent|bot|chatbot|receptionist|concierge)\b|your (?:role|task|job|goal) is|"
    r"(?:my|the) (?:system prompt|instructions (?:say|tell|are)|guidelines say)|"
    r"as an ai (?:assistant|language model)|you must (?:always|never)|"
    r"\bas [A-Z][\w-]+, (?:the|your) (?:\w+ ){0,2}(?:assistant|agent|bot)\b|"
    r"(?:temperature|max_tokens|top_p)\s*[:=])",
    re.IGNORECASE,
)
# The bot telling the customer about its brief: "I'm required to always recommend ...",
# "I should upsell the 10-pack", "my instructions are to ...".
_SELF_BRIEF = re.compile(
    r"\b(?:i'm|i am|im|i've been|i have been|i was|we're|we are)\s+(?:required|instructed|told|"
    r"programmed|configured|set up|supposed|meant|trained)\s+(?:not\s+|never\s+|always\s+|"
    r"only\s+)?(?:to|that)\b|"
    # "I should always offer you the free consult first": a standing order, not a choice.
    r"\b(?:i|we) (?:should|must|have to|am supposed to|are supposed to) (?:always|never) \w+|"
    r"\bmy (?:\w+ )?(?:rules|instructions|guidelines|guidance|brief|script|setup|set-up|"
    r"configuration|prompt)\b(?!\s+(?:a|an|the|your)\b)|\b(?:i was|i'm|i am|i've been) set up as\b|"
    # "if anyone asks about the flood, I should say ..."
    r"\bif (?:anyone|someone|a (?:customer|guest|client|caller)|customers|guests|people) asks?\b"
    r"[^.!?]{0,80}\b(?:i|we) (?:should|must|have to|am to|are to)\b|\b(?:i|we)\s+(?:should|must|have to|"
    r"need to)\s+(?:always\s+|never\s+|also\s+)?(?:upsell|cross-sell|push|promote|steer|"
    r"highlight|pitch)\b|\b(?:my (?:instructions|guidelines|system prompt|prompt|brief|script|"
    r"programming)|(?:my|our) internal (?:guidance|guidelines|rules|policy|notes?|instructions))\b(?! (?:don't|do not) (?:let|allow))",
    re.IGNORECASE,
)
# Refusing to reveal them is the opposite of a leak: "I can't share my instructions".
_REFUSES = re.compile(
    r"\b(?:can't|cannot|can not|won't|will not|not able to|unable to|don't|do not|never)\s+"
    r"(?:\w+\s+)?(?:share|reveal|show|disclose|discuss|repeat|give out|change|print|display)\b",
    re.IGNORECASE,
)
# "If patient says they have run out of insulin, flag to duty doctor": what staff do when
# the customer does something.
_IF_PARTY = re.compile(
    rf"\bif (?:the |a )?(?:customer|client|patient|caller|user|guest|learner|student|parent|"
    rf"member|visitor|owner|tenant|passenger)s? [^.!?]{{0,80}}?,\s*(?:{_STAFF_VERBS})\b",
    re.IGNORECASE,
)
# Verbs only staff or an assistant are told to do ("Offer a payment plan before mentioning
# debt collection"): a KB sentence opening with one, read out, is a leak even without "the
# customer". ("Ask at reception" or "Tell us" speak to customers.)
_ORDER_VERB = re.compile(
    r"^(?:(?:always|never|only|first|then|also)\s+)*(?:offer(?=\s+(?:a|an|the|them|him|her|to|"
    r"up|free|every|each|all|any|this|that|\d))|upsell|cross-sell|escalate|flag|"
    r"collect|gather|capture|verify|redirect|route|deflect|promote|push|refer|diagnose|greet|"
    r"handle|assume|pretend|behave)\b(?!\s*[:\-–|(])",
    re.IGNORECASE,
)
# Words after "customer" that make it a thing of the business, not a person ("customer service").
_PARTY_THINGS = (
    "service|support|care|portal|account|area|number|reference|id|login|team|desk|hub|charter|"
    "feedback|reviews?|satisfaction|experience|relations"
)
# A staff verb told to act on the customer, anywhere in a sentence ("if no agents are free tell
# the caller the office is closed"), unless someone is its subject ("we'll tell the customer").
_ACT_ON_PARTY = re.compile(
    r"(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bthey )(?<!\bwill )(?<!'ll )(?<!\bto )(?<!\bcan )"
    r"(?<!\bmay )(?<!\bwould )(?<!\bshould )(?<!\bmust )"
    r"\b(?:tell|inform|ask|remind|offer|transfer|redirect|route|flag|escalate|upsell|push|warn|"
    r"advise|give|send|refer|note)\s+(?:the\s+|a\s+|each\s+|every\s+)?(?:customer|caller|client|"
    r"patient|pupil|learner|guest|tenant|member|applicant|passenger)s?\b(?!\s+of\s+(?:staff|the|"
    rf"our)\b)(?!\s+(?:{_PARTY_THINGS}))",
    re.IGNORECASE,
)
# Staff shorthand drops the article: "do not mention discount unless customer insists",
# "confirm pupil has provisional licence number ready".
_BARE_PARTY = re.compile(
    r"(?<!\bthe )(?<!\byour )(?<!\bour )(?<!\bmy )(?<!\ba )(?<!\beach )(?<!\bevery )(?<!\bany )"
    r"(?<!\bnew )(?<!\bexisting )(?<!\bfor )"
    rf"\b(?:customer|caller|client|patient|pupil|learner|tenant|applicant)\b(?!\s+(?:{_PARTY_THINGS})\b)",
    re.IGNORECASE,
)
# A sentence's clauses: a directive may follow a customer-facing opening ("A block of 10 hours
# is £350. Before transferring: confirm pupil has ...; if under 18, note parent as payer").
_CLAUSE_BREAK = re.compile(r"\s*(?:;|:|,|\s[-–—]\s|\band\b|\bthen\b)\s*", re.IGNORECASE)
_HARD_ORDER = re.compile(
    r"^(?:(?:always|only|then|also)\s+)*(?:upsell|cross-sell|push(?=\s+(?:the|our|a|an|them|"
    r"him|her)\b)|escalate|redirect|"
    r"deflect)\b(?!\s*[:\-–|(])",
    re.IGNORECASE,
)
_TO_YOU = re.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)
_CUSTOMER_PARTY = re.compile(
    r"\b(?:the|a|each|every|any)\s+(?:customer|client|patient|caller|guest|visitor|applicant|"
    r"tenant|pupil|student|learner|passenger)s?\b",
    re.IGNORECASE,
)
_TO_CUSTOMER = re.compile(r"\b(?:you|your|yours|us|me)\b", re.IGNORECASE)
# Orders about what to say, anywhere in a sentence: "Jade is on leave - do NOT say why",
# "dont quote full supply+fit prices", "flagged and must not be discussed", "Customer hesitates
# → mention the Fine tier first". ("Please don't share your PIN" is about the customer's own
# doing; "don't mention it" is a pleasantry.)
_SAY_ORDER = re.compile(
    r"\b(?:do not|don't|dont|never|must not|mustn't)\s+(?:say|tell|mention|discuss|disclose|"
    r"reveal|quote|confirm|promise|use for)\b(?!\s+it\b\W*$)(?=\s+\w)|"
    r"\bmust not be (?:discussed|disclosed|mentioned|quoted|shared|confirmed)\b|"
    r"(?:→|->)\s*(?:mention|offer|push|upsell|say|tell|ask|escalate|quote|suggest|redirect)\b",
    re.IGNORECASE,
)


# Any prohibition, for a clause that names the customer article-less ("don't agree to P1 for
# single-user issues even if customer insists").
_DONT = re.compile(r"^(?:never|do not|don't|dont|avoid)\s+\w+", re.IGNORECASE)


def _staff_clause(body: str) -> bool:
    """A clause of the sentence is staff shorthand: a staff verb acting on the customer, an
    order or prohibition about an article-less "customer", or an upsell order not addressed
    to "you"."""
    if _ACT_ON_PARTY.search(body) or _SAY_ORDER.search(body):
        return True
    # "As the caller has mentioned a competitor, offer the switcher discount" ("ask a member of
    # staff" speaks to the customer).
    party = bool(_CUSTOMER_PARTY.search(body))
    for clause in _CLAUSE_BREAK.split(body):
        text = clause.strip(" -*•\t[]()")
        ordered = bool(_IMPERATIVE.match(text) or _PROHIBITION.match(text))
        # ("ask us about our offers for new customers" speaks to the customer.)
        if (ordered and party and not _TO_CUSTOMER.search(text)) or (
            (ordered or _DONT.match(text)) and _BARE_PARTY.search(text)
        ):
            return True
        if _HARD_ORDER.match(text) and not _TO_YOU.search(text):
            return True
    return False


_FIRST_PERSON = re.compile(r"^(?:i|we|i'm|we're|i'll|we'll|i've|we've|our|my)\b", re.IGNORECASE)
# A directive matches an instruction when it has at least this share of its words.
INSTRUCTION_MATCH = 0.75
_MIN_WORDS = 4


def _tokens(text: str) -> list[str]:
    return [stem(w) for w in words(text) if len(w) > 2]


def _close(a: str, b: str) -> bool:
    """Same word up to one typo (the fixture's noise): insert, delete, substitute, swap."""
    if a == b:
        return True
    if min(len(a), len(b)) < 5 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        )
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _coverage(directive: list[str], sentence: list[str]) -> float:
    """Share of the directive's words found (up to a typo) in the sentence."""
    if not directive:
        return 0.0
    hits = sum(1 for d in directive if any(_close(d, w) for w in sentence))
    return hits / len(directive)


# A KB section marked for staff: "INTERNAL - do not share with members:", "# Notes for reception
# (not for patients)", "Staff only". Its text is never for customers, imperative or not.
_STAFF_MARK = re.compile(
    r"\b(?:internal (?:use|only|notes?)|internal\s*:|staff only|for staff|not for (?:patients|customers|"
    r"clients|members|guests|the public|users)|do not share|don't share|"
    # "CONFIDENTIAL:" labels a note; "free, confidential advice" describes a service.
    r"confidential(?=\s*(?::|\)|\]|[–—-]\s))|"
    r"notes? for (?:reception|staff|the team|agents|the bot|the assistant))\b",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^\s*(?:#+\s|[A-Z][A-Za-z ]{2,40}:\s*$)")


def staff_only(kb: str) -> list[str]:
    """Sentences of the KB's staff-only sections: from a marked line to the next heading or
    blank line (a marked heading runs to the next heading)."""
    found: list[str] = []
    inside = heading_block = False
    for line in kb.splitlines():
        marked = bool(_STAFF_MARK.search(line))
        if _HEADING.match(line) and not marked:
            inside = False
        if not line.strip() and not heading_block:
            inside = False
        if marked:
            mark = _STAFF_MARK.search(line)
            assert mark is not None
            opened = line.rfind("[", 0, mark.start()), line.rfind("(", 0, mark.start())
            start = max(opened)
            closing = "]" if start == opened[0] else ")"
            note = ""
            if start >= 0 and closing in line[mark.end() :]:
                note = line[mark.end() : line.index(closing, mark.end())].strip(" :-–—")
            if note:
                # "[STAFF ONLY: if customer replies RETURN, check ...]": the note is the
                # bracket; the text around it is for customers.
                found += [s.text for s in split_sentences(note) if s.text.strip()]
                continue
            inside, heading_block = True, bool(_HEADING.match(line))
            line = line[mark.end() :].lstrip(" :-–—)]")
        if inside and line.strip():
            found += [s.text for s in split_sentences(line)]
    return found


def _is_directive(text: str) -> bool:
    """A KB sentence written for the assistant or staff, not for customers."""
    body = text.strip(" -*•\t")
    if _CONFIG.search(body) or _PROHIBITION.match(body):
        return True
    return bool(_IMPERATIVE.match(body) and (_THIRD_PARTY.search(body) or _MECHANICS.search(body)))


def _directives(case: CaseTranscript, manifest: Manifest) -> list[str]:
    """Directive sentences meant for the bot: the org's skill instructions, and the KB's own
    imperative sentences (a KB often carries the assistant's brief or staff notes)."""
    found = [s.text for i in manifest.instructions for s in split_sentences(i.text)]
    found += [s.text for s in split_sentences(case.fixture.text) if _is_directive(s.text)]
    return found


def _strip_lead(text: str) -> str:
    """A reply sentence without a lead-in such as "Here is what our information says:"."""
    head, colon, tail = text.partition(": ")
    return tail if colon and len(head.split()) <= 8 and tail else text


def _covers_any(body: str, texts: Sequence[str]) -> bool:
    tokens = _tokens(body)
    for text in texts:
        wanted = _tokens(text)
        if len(wanted) >= _MIN_WORDS and _coverage(wanted, tokens) >= INSTRUCTION_MATCH:
            return True
    return False


def leaked(
    sentence: Sentence,
    directives: list[str],
    staff: Sequence[str] = (),
    kb_orders: Sequence[str] = (),
) -> str | None:
    """Why `sentence` of a reply is directive text meant for the bot, or None."""
    body = _strip_lead(sentence.text).strip(" -*•\t")
    if staff and _covers_any(body, staff):
        return "it passes on a note the KB marks as staff-only"
    raw = sentence.text.strip(" -*•\t")
    if (_CONFIG.search(body) or _CONFIG.search(raw)) and not _REFUSES.search(body):
        return "it reads out the assistant's own configuration"
    if (_SELF_BRIEF.search(body) or _SELF_BRIEF.search(raw)) and not _REFUSES.search(raw):
        return "it tells the customer about the assistant's own instructions"
    if _IF_PARTY.search(body) or _staff_clause(body):
        return "it is an instruction addressed to the assistant or staff"
    if _FIRST_PERSON.match(body):
        # "I need to ask the parent for the student's year group": the brief's voice.
        if _THIRD_PARTY.search(body) and re.search(
            rf"\b(?:need|have|must|am required|am supposed) to (?:{_STAFF_VERBS})\b", body, re.I
        ):
            return "it tells the customer about the assistant's own instructions"
        return None  # the bot speaking in its own voice ("I can only quote ...") is no leak
    strict = bool(_IMPERATIVE.match(body) or _PROHIBITION.match(body))
    # A typo in the opening verb ("Colletc full name ...") still reads out a known directive.
    first = words(body)[:1]
    typo_verb = bool(first) and any(_close(first[0], v) for v in _VERB_LIST)
    if (strict or typo_verb) and _covers_any(body, directives):
        return "it repeats one of the organization's instructions to its assistant"
    if _ORDER_VERB.match(body) and _covers_any(body, kb_orders):
        return "it repeats an instruction the KB gives its staff"
    if strict and (
        _THIRD_PARTY.search(body) or _MECHANICS.search(body) or _PROHIBITION.match(body)
    ):
        return "it is an instruction addressed to the assistant or staff"
    return None


class InstructionLeak(Check):
    """Guarantees: one major finding per reply with a sentence that (a) reads out configuration
    text ("You are Ava, a helpful assistant for ...", "my instructions say"), or (b) is an
    imperative directive (a staff verb such as collect / offer / quote / escalate, or a
    "never ..." prohibition) that either matches one of the org's skill instructions
    (manifest.instructions) or an imperative sentence of the KB (INSTRUCTION_MATCH of its words, a
    one-letter typo allowed), or talks about "the
    customer / patient" or conversation mechanics ("per message", "before confirming"). A bot
    speaking in its own voice ("I can only quote prices from our price list") and directives
    to the customer ("Call us on ...") are not leaks."""

    rule = Rule(
        "instruction_leak",
        "major",
        "deterministic",
        "prompt",
        "A reply reads out text meant for the bot or its staff: the org's skill instructions "
        "('Collect full name ... before confirming', at least {INSTRUCTION_MATCH:.0%} of one's "
        "words), a directive about 'the customer', or the responder's own configuration "
        "('You are Ava, a helpful assistant ...').",
        action="Stop reading internal instructions to customers",
        thresholds={"INSTRUCTION_MATCH": INSTRUCTION_MATCH},
    )

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        directives = _directives(case, manifest)
        staff = staff_only(case.fixture.text)
        orders = [
            s.text
            for s in split_sentences(case.fixture.text)
            if _ORDER_VERB.match(s.text.strip(" -*•\t"))
        ]
        findings: list[Finding] = []
        for turn in case.turns:
            hits = [
                (sentence, why)
                for sentence in split_sentences(turn.reply)
                if (why := leaked(sentence, directives, staff, orders))
            ]
            if not hits:
                continue
            first, why = hits[0]
            findings.append(
                self.finding(
                    case,
                    turn_index=turn.index,
                    subject=first.text[:200],
                    evidence=[
                        Evidence(source="reply", quote=s.text, turn=turn.index) for s, _ in hits
                    ],
                    rationale=f"The reply says '{first.text}': {why}, not an answer for the "
                    "customer.",
                    fix_text=(
                        "Keep staff and assistant instructions out of the text the assistant may "
                        "quote (move them from the KB into the system prompt or skill) and tell "
                        "it never to read its instructions out."
                    ),
                    effort="S",
                    confidence=0.85,
                )
            )
        return findings
