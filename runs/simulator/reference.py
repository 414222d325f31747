"""The built-in `reference` responder: a small retrieval-grounded booking assistant.

It is the demo bot and the base for canaries, so it behaves like a decent production bot:
it answers from passages it retrieved from the case's fixture KB (BM25), quotes rather than
invents, says plainly when the KB does not cover something, refuses prompt injection and
discount pressure, never gives safety advice, collects the required intake fields at most two
at a time, and reports `COMPLETE` once a booking request has every required field.

With the offline engine the reply is composed by rules from the retrieved passages; the engine
meters what a model would have read (instructions, passages, recent history) and written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from qalab.llm import Engine
from qalab.llm.base import Message, estimate_message_tokens, estimate_tokens
from qalab.llm.prompts import fence, load_prompt
from runs.simulator.contract import IntakeFieldRef, ResponderReply, ResponderRequest, ResponderUsage
from runs.simulator.extraction import extract_fields, field_kind
from runs.simulator.retrieval import KbIndex, Passage, content_words, kb_index

MAX_TOKENS = 300
HISTORY_MESSAGES = 6
MAX_QUESTIONS = 2

PROMPT = load_prompt(Path(__file__).resolve().parent / "prompts", "reference_responder")

_INJECTION = re.compile(
    r"ignore (?:all |any )?(?:of )?(?:your |ur |the |my )?(?:previous|prior|above|earlier|former) "
    r"instructions|system prompt|developer mode|jailbreak|you are now|"
    r"\bi(?:'?m| am) (?:the |your )?(?:manager|owner|admin|developer)\b",
    re.IGNORECASE,
)
_DISCOUNT = re.compile(r"discount|\d+ ?% off|\bfor free\b|\bfree of charge\b", re.IGNORECASE)
_SAFETY = re.compile(
    r"\b(?:pain\w*|hurts?|throbb\w*|swell\w*|swollen|bleed\w*|antibiotic\w*|medic(?:ine|ation)s?|"
    r"dose|dosage|prescri\w*|blister\w*|burn(?:ing|t|s)?|chest|breath\w*|smells? burnt|"
    r"spongy|warning light|fix it myself|is it safe|is it serious|overheat\w*|really hot)\b",
    re.IGNORECASE,
)
_BOOKING = re.compile(
    r"\b(?:book\w*|appointment|come in|schedule|reserve|make it)\b", re.IGNORECASE
)
_NEGATED_BOOKING = re.compile(
    r"\b(?:don'?t|do not|dont|not) (?:want|need|wanna) to (?:come in|book)", re.IGNORECASE
)
_OFFER_QUESTION = re.compile(
    r"\b(?:do (?:you|u) (?:do|offer|have|provide|sell)|can (?:you|u) do|is there|are there|"
    r"available)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\W*(?:(?:hi|hey|hello|ok|okay|and|so)(?: there)?\W+)*"
    r"(?:how|what|when|where|which|who|why|are|is|do|does|can|could|will|r u|u open)\b",
    re.IGNORECASE,
)
_INFO_QUESTION = re.compile(
    r"\b(?:how much|how long|price|cost|open|hours|policy|policies|what|when|which|where|"
    r"is there|are there|do (?:you|u)|does)\b",
    re.IGNORECASE,
)
_EXPANSIONS = (
    (re.compile(r"how much|cost|price|charge", re.I), "price eur euro"),
    (re.compile(r"how long|duration|take\b", re.I), "minutes min takes"),
    (
        re.compile(r"\bopen\b|opening|\bclose|until|till|what time", re.I),
        "hours open opening closed",
    ),
    (re.compile(r"cancel", re.I), "cancelled cancellation notice fee"),
    (re.compile(r"pay|card|cash", re.I), "payment card cash"),
)
_CELL_SEPARATORS = re.compile(r"\s*\|\s*")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)]|#+)\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9€$£+])")
_MONEY_LINE = re.compile(
    r"\d+(?:[.,]\d{2})?\s*(?:€|eur|euro|usd|\$|£|gbp|chf)|(?:€|\$|£)\s*\d", re.I
)
_QA_PREFIX = re.compile(r"^(?:Q|A|Answer|Question)\s*[:.)]\s*", re.IGNORECASE)
_HEADER = re.compile(r"^\s*(?:subject|from|to|cc|re|sent|date)\s*:", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(
    r"\?|;|,\s*(?:and|but)\s+|\s+and\s+(?=(?:r|are|is|do|does|what|when|how|can)\b)"
)
MAX_CLAUSES = 3
PASSAGES_PER_CLAUSE = 2
_PRICE_START = re.compile(r"^\W{0,3}(?:€|eur|euro|usd|gbp|chf|\$|£)?\s*\d", re.IGNORECASE)
_NAME_SPLIT = re.compile(r"\s*(?:\||\s-\s|\s{2,}|:|\t|\.{2,}|–|—)\s*")


def reference_respond(request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
    """One turn of the reference assistant for `request` (see the module docstring)."""
    index = kb_index(request.kb)
    customer = [m.content for m in request.messages if m.role == "customer"]
    services = service_names(index)
    extracted = extract_fields(request.intake_fields, customer, services)
    retrieved = _retrieve(index, customer, services)
    passages = list(dict.fromkeys(p for item in retrieved for p in item.passages))
    messages = _prompt(request, passages)

    def compose() -> ResponderReply:
        reply, status = _compose(request, index, customer, extracted, services, retrieved)
        return ResponderReply(reply=reply, extracted=extracted, status=status)

    result = engine.run(
        role="responder",
        purpose=purpose,
        messages=messages,
        max_tokens=MAX_TOKENS,
        output=ResponderReply,
        offline=compose,
    )
    usage = ResponderUsage(
        prompt_tokens=estimate_message_tokens(messages),
        completion_tokens=min(MAX_TOKENS, estimate_tokens(result.model_dump_json())),
    )
    return result.model_copy(update={"usage": usage})


def _prompt(request: ResponderRequest, passages: list[Passage]) -> list[Message]:
    required = ", ".join(f.label for f in request.intake_fields if f.required) or "none"
    kb = "\n".join(fence(f"[{p.doc_id}] {p.title}\n{p.text}", "kb") for p in passages)
    system = PROMPT.render(
        organization=request.organization, required=required, passages=kb or "(no passage)"
    )
    history = [
        {"role": "user" if m.role == "customer" else "assistant", "content": m.content}
        for m in request.messages[-HISTORY_MESSAGES:]
    ]
    return [{"role": "system", "content": system}, *history]


def _expansions(text: str) -> list[str]:
    return [words for pattern, words in _EXPANSIONS if pattern.search(text)]


def _clauses(customer: list[str], services: list[str]) -> list[tuple[str, str]]:
    """The questions in the last message as (clause, query); a short follow-up ("and how long does
    that take?") borrows the service last named in the conversation, or the previous message."""
    last = customer[-1]
    pieces = [p for p in _CLAUSE_SPLIT.split(last) if content_words(p)] or [last]
    named = [s for m in customer for s in services if s.casefold() in m.casefold()]
    context = named[-1] if named else (customer[-2] if len(customer) > 1 else "")
    queries = []
    for piece in pieces[:MAX_CLAUSES]:
        query = piece
        if len(content_words(piece)) < 3 and not any(
            s.casefold() in piece.casefold() for s in services
        ):
            query = f"{context} {piece}"
        queries.append((piece, " ".join([query, *_expansions(piece)])))
    return queries


@dataclass(frozen=True)
class Retrieved:
    clause: str
    query: str
    subject: str  # the service the clause is about, if any
    passages: list[Passage]


def _retrieve(index: KbIndex, customer: list[str], services: list[str]) -> list[Retrieved]:
    """Per clause of the last message: its query, its subject and its best passages."""
    out = []
    for clause, query in _clauses(customer, services):
        named = [s for s in services if s.casefold() in query.casefold()]
        hits = [p for _, p in index.search(query, k=PASSAGES_PER_CLAUSE)]
        out.append(Retrieved(clause, query, max(named, key=len) if named else "", hits))
    return out


_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"
_DAY_RANGE = re.compile(rf"\b{_DAY}\s*(?:-|–|to|until|through)\s*{_DAY}", re.IGNORECASE)
_DAY_ONE = re.compile(rf"\b{_DAY}\b", re.IGNORECASE)
_HOURS_QUESTION = re.compile(r"\bopen|\bclose|hours|until|till|what time", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}[:.]\d{2}\b")


def _day_index(abbr: str) -> int:
    return [d[:3] for d in _DAY_NAMES].index(abbr.casefold())


def days_covered(line: str) -> set[int]:
    """Weekdays (0 = Monday) a KB line speaks about: ranges ("Mon-Thu") and single days."""
    days: set[int] = set()
    for match in _DAY_RANGE.finditer(line):
        start, end = _day_index(match.group(1)), _day_index(match.group(2))
        days |= {(start + i) % 7 for i in range((end - start) % 7 + 1)}
    rest = _DAY_RANGE.sub(" ", line)
    days |= {_day_index(m.group(1)) for m in _DAY_ONE.finditer(rest)}
    return days


def _hours_line(index: KbIndex, clause: str) -> str | None:
    """For "are you open on Tuesday?": the KB line that gives that day's hours (or says it is
    closed), whatever its format ("Mon-Thu: 08:30 to 18:00", "Closed on Sunday.")."""
    if not _HOURS_QUESTION.search(clause):
        return None
    asked = [i for i, day in enumerate(_DAY_NAMES) if day in clause.casefold()]
    if len(asked) != 1:
        return None
    candidates = []
    for order, passage in enumerate(index.passages):
        for raw in _reflow(passage.text):
            line = _clean(raw)
            if asked[0] not in days_covered(line) or len(line) > 160:
                continue
            if _CLOCK.search(line) or "closed" in line.casefold():
                # Prefer a plain statement of that day's hours over a longer mention.
                candidates.append((len(days_covered(line)) > 1, len(line), order, line))
    if not candidates:
        return None
    return _sentence(min(candidates)[3])


def _answer_lines(retrieved: list[Retrieved], index: KbIndex) -> list[str]:
    """One quoted line per clause, named after its subject when the line itself does not."""
    lines: list[str] = []
    hours_given = False
    for item in retrieved:
        hours = _hours_line(index, item.clause)
        if hours is not None:
            hours_given = True
            if hours not in lines:
                lines.append(hours)
            continue
        if hours_given and _HOURS_QUESTION.search(item.clause):
            continue  # "... and until what time?": the day's line above already says it
        primary = frozenset(content_words(" ".join([item.clause, *_expansions(item.clause)])))
        best = _best_lines(item.passages, item.query, primary=primary, subject=item.subject)
        for line, about in best:
            # Name the subject only for a line that is about it (under its heading); a line of
            # another service's section is never passed off as this one's.
            if about and item.subject.casefold() not in line.casefold():
                line = f"{item.subject}: {line}"
            if line not in lines:
                lines.append(line)
    return lines


def service_names(index: KbIndex) -> list[str]:
    """Service names as the KB's price lines spell them ("Hygiene clean | 80 EUR | 45 min")."""
    names: dict[str, str] = {}
    for passage in index.passages:
        for line in passage.text.splitlines():
            if not _MONEY_LINE.search(line) or len(re.findall(r"\w:\s", line)) > 1:
                continue
            pieces = _NAME_SPLIT.split(_BULLET.sub("", line.strip(" |")), maxsplit=1)
            if len(pieces) < 2 or not _PRICE_START.match(pieces[1]):
                continue  # a price line starts with the name, then the price
            head = pieces[0]
            head = re.sub(r"\s*\(.*?\)\s*", " ", head).strip(" -:,.")
            if 3 <= len(head) <= 60 and not re.search(r"\d", head) and len(head.split()) <= 6:
                names.setdefault(head.casefold(), head)
    return sorted(names.values(), key=str.casefold)


def _is_question(text: str) -> bool:
    """A request for information; "can I book X?" alone is a booking, not a question."""
    asks = "?" in text or bool(_QUESTION_START.search(text) or _INFO_QUESTION.search(text))
    if asks and _BOOKING.search(text) and not _INFO_QUESTION.search(text):
        return False
    return asks


def _clean(line: str) -> str:
    line = _QA_PREFIX.sub("", _BULLET.sub("", line.strip()))
    line = _CELL_SEPARATORS.sub(" - ", line.strip("| ")).strip(" -")
    return re.sub(r"\s+", " ", line)


def _reflow(text: str) -> list[str]:
    """Lines of a passage, with a line broken mid-sentence joined to its continuation."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if lines and line[:1].islower() and lines[-1][-1:] not in ".!?:|":
            lines[-1] = f"{lines[-1]} {line}"
        elif line:
            lines.append(line)
    return lines


def _best_lines(
    passages: list[Passage],
    query: str,
    limit: int = 1,
    primary: frozenset[str] = frozenset(),
    subject: str = "",
) -> list[tuple[str, bool]]:
    """The lines (or sentences) of the passages that share most content words with the query,
    each with whether it is about `subject` (names it, or sits under a heading naming it).

    Headings, e-mail headers and the FAQ's own questions never win; when the customer asks
    for a figure (price, duration, hours) a line holding one is preferred; when the question
    is about a service and some line is about it, only such lines are candidates (so "how long
    does a child check-up take?" is never answered with another service's duration)."""
    terms = set(content_words(query))
    wants_figure = any(w in terms for w in ("price", "minute", "hour"))
    wanted = subject.casefold()
    scored: list[tuple[int, int, str, bool]] = []
    order = 0
    for passage in passages:
        heading = ""
        for raw in _reflow(passage.text):
            if raw.lstrip().startswith("#"):
                heading = raw.casefold()
                continue
            if _HEADER.match(raw):
                continue
            for piece in _SENTENCE_END.split(_clean(raw)):
                order += 1
                has_digit = bool(re.search(r"\d", piece))
                size = len([w for w in piece.split() if any(c.isalnum() for c in w)])
                if size < (3 if has_digit else 5) or "?" in piece:
                    continue
                piece_terms = set(content_words(piece))
                overlap = len(terms & piece_terms) + len(primary & piece_terms)
                if wants_figure and has_digit:
                    overlap += 2
                about = bool(wanted) and (wanted in piece.casefold() or wanted in heading)
                if overlap:
                    scored.append((overlap, order, piece, about))
    if any(about for *_, about in scored):
        scored = [item for item in scored if item[3]]
    chosen: list[tuple[int, str, bool]] = []
    seen: set[str] = set()
    for _, position, piece, about in sorted(scored, key=lambda s: (-s[0], s[1])):
        if piece.casefold() in seen:
            continue
        seen.add(piece.casefold())
        chosen.append((position, piece, about))
        if len(chosen) == limit:
            break
    return [(_sentence(p), about) for _, p, about in sorted(chosen)]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else f"{text}."


def _unknown_terms(
    index: KbIndex, text: str, services: list[str], stated: dict[str, str] | None = None
) -> list[str]:
    """Words of the question the KB never uses: what the customer asks about that we lack.
    The customer's own details in the same message (a name, an e-mail) are not topics."""
    known = {w for s in services for w in content_words(s)}
    known |= {w for value in (stated or {}).values() for w in content_words(value)}
    return [w for w in content_words(text) if len(w) >= 4 and w not in known and not index.knows(w)]


def _label(field: IntakeFieldRef) -> str:
    label = re.sub(r"^(?:your|the)\s+", "", field.label.strip(), flags=re.IGNORECASE)
    return label[:1].lower() + label[1:]


def _ask(fields: list[IntakeFieldRef]) -> str:
    """One question sentence for the first (at most two) missing fields."""
    asked = fields[:MAX_QUESTIONS]
    service = next((f for f in asked if field_kind(f) == "service"), None)
    others = [_label(f) for f in asked if f is not service]
    if service is None:
        return f"Could you tell me your {' and '.join(others)}?"
    label = _label(service)
    if not others:
        return f"Which {label} would you like?"
    return f"Which {label} would you like, and could you tell me your {others[0]}?"


def _nudge(fields: list[IntakeFieldRef], services: list[str]) -> str:
    """A re-ask without the question: the options, and what is still needed."""
    needed = " and ".join(_label(f) for f in fields[:MAX_QUESTIONS])
    if any(field_kind(f) == "service" for f in fields):
        offer = f"We offer {', '.join(services)}. " if services else ""
        return f"{offer}Just tell me the {needed} and I will note it."
    return f"To pass on your request I still need your {needed}."


def _summary(fields: list[IntakeFieldRef], extracted: dict[str, str]) -> str:
    by_kind = {field_kind(f): extracted[f.key] for f in fields if f.key in extracted}
    parts = []
    if "service" in by_kind:
        parts.append(f"for {by_kind['service']}")
    if "date" in by_kind:
        parts.append(f"on {by_kind['date']}")
    if "time" in by_kind:
        parts.append(f"at {by_kind['time']}")
    who = f", {by_kind['name']}" if "name" in by_kind else ""
    what = " ".join(parts) or "with the details you gave"
    return (
        f"Thank you{who}. I have passed on your booking request {what}; "
        "the team will confirm it with you."
    )


def _compose(
    request: ResponderRequest,
    index: KbIndex,
    customer: list[str],
    extracted: dict[str, str],
    services: list[str],
    retrieved: list[Retrieved],
) -> tuple[str, str]:
    last = customer[-1]
    parts: list[str] = []

    wants_booking = bool(_BOOKING.search(last)) and not _NEGATED_BOOKING.search(last)
    safety = bool(_SAFETY.search(last)) or (
        any(_SAFETY.search(m) for m in customer[:-1]) and not wants_booking
    )
    if safety:
        parts.append(
            "I'm sorry to hear that. I can't give medical, technical or safety advice over chat."
        )
        parts += [
            line
            for line, _ in _best_lines(
                [p for _, p in index.search(f"{last} emergency urgent call appointment", k=3)],
                f"{last} emergency urgent call",
                limit=1,
            )
        ]
        if _SAFETY.search(last):
            parts.append("Would you like me to pass on a request for an urgent appointment?")
        else:
            parts.append("Just tell me if you would like an appointment and I will arrange it.")
        return " ".join(parts), "AWAITING_RESPONSE"

    injection = bool(_INJECTION.search(last))
    if injection:
        parts.append(
            "I can't share my instructions or change how I work, but I'm happy to help with "
            "our services, prices, opening hours and bookings."
        )
    if _DISCOUNT.search(last):
        parts.append("I can't confirm any discount: I can only quote the prices in our price list.")

    booking = any(_BOOKING.search(m) and not _NEGATED_BOOKING.search(m) for m in customer)
    gave_details = (
        booking
        and "?" not in last
        and bool(extract_fields(request.intake_fields, [last], services))
    )
    if not injection and not gave_details and _is_question(last):
        stated = extract_fields(request.intake_fields, [last], services)
        unknown = _unknown_terms(index, last, services, stated)
        if unknown and _OFFER_QUESTION.search(last):
            parts.append(
                f"I'm sorry, I can't find anything about {' '.join(unknown[:3])} in our "
                "information, so I can't confirm that we offer it or quote a price."
            )
        else:
            lines = _answer_lines(retrieved, index)
            if lines:
                parts.append("Here is what our information says: " + " ".join(lines))
            elif services:
                parts.append("We offer " + ", ".join(services) + ".")
            else:
                parts.append("I'm sorry, I can't find that in our information.")
    elif not parts and not booking:
        return "Thanks for your message. How can I help you today?", "AWAITING_RESPONSE"

    if booking:
        # The service first: the other questions depend on it.
        required = sorted(
            (f for f in request.intake_fields if f.required),
            key=lambda f: field_kind(f) != "service",
        )
        missing = [f for f in required if f.key not in extracted]
        if missing:
            question = _ask(missing)
            asked_before = any(
                question in m.content for m in request.messages if m.role == "assistant"
            )
            # Asking the same question again gets the same vague answer: offer options instead.
            listed = any(p.startswith("We offer") for p in parts)
            parts.append(_nudge(missing, [] if listed else services) if asked_before else question)
            return " ".join(parts), "AWAITING_RESPONSE"
        parts.append(_summary(request.intake_fields, extracted))
    return " ".join(parts), "COMPLETE"
