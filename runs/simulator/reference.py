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

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from generator.dates import find_dates
from qalab.llm import Engine
from qalab.llm.base import Message, estimate_message_tokens, estimate_tokens
from qalab.llm.prompts import fence, load_prompt
from runs.simulator.contract import IntakeFieldRef, ResponderReply, ResponderRequest, ResponderUsage
from runs.simulator.extraction import (
    extract_fields,
    extract_spoken,
    field_kind,
    mask_free_text,
)
from runs.simulator.retrieval import (
    KbIndex,
    Passage,
    content_words,
    is_directive,
    is_internal,
    kb_index,
)

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
    r"\b(?:don'?t|do not|dont|not) (?:want|need|wanna) to (?:come in|book)|"
    r"\bbefore (?:i|we) (?:book|come in)|\bbefore booking\b|"
    r"\b(?:rather|prefer) not (?:to )?(?:come in|book)|\bnot (?:coming|come) in\b",
    re.IGNORECASE,
)
_SUGGEST = re.compile(
    r"\b(?:suggest|recommend|what do (?:you|u) think|not sure|unsure|no idea|dunno|"
    r"don'?t know|any ideas?)\b",
    re.IGNORECASE,
)
_FOLLOW_UP = re.compile(
    r"\b(?:does|do|would|will|is|can)\s+(?:that|this|it|the same|the policy)\s+(?:\w+\s+){0,2}?"
    r"(?:apply|applies|count|cover|include|go|hold|work)\b",
    re.IGNORECASE,
)
_POLICY_TOPIC = re.compile(r"polic|\brules?\b|cancel|terms|conditions", re.IGNORECASE)
_PRICE_ASKED = re.compile(r"how much|\bcost|\bprice|\bcharge|\bfee\b", re.IGNORECASE)
_EXISTS_QUESTION = re.compile(r"\b(is|are) there\b", re.IGNORECASE)
_TOPIC = (
    re.compile(
        r"\b(?:do|does|can|could) (?:you|u|ye)\s+(?:do|offer|have|provide|sell|stock|fit|treat)\s+"
        r"(?P<topic>[^?.!,;]+)",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:is|are) there\s+(?P<topic>[^?.!,;]+)", re.IGNORECASE),
    re.compile(
        r"\b(?:do|should|must|will) (?:i|we)\s+(?:need to |have to )?"
        r"(?P<todo>bring|wear|prepare|fill in|eat|pay)\b",
        re.IGNORECASE,
    ),
)
_TOPIC_TAIL = re.compile(
    r"\s+(?:for (?:it|that|this|them)|too|as well|at all|near(?:by| u| you| here)?|"
    r"anywhere|for me|please|pls|then)\b.*$",
    re.IGNORECASE,
)
_TOPIC_FILLER = frozenset(["anywhere", "somewhere", "place", "way", "option", "possibility"])
_REFERS_BACK = re.compile(r"\b(?:it|that|them|those)\b", re.IGNORECASE)
_DECLINED = re.compile(r"can't find anything about (?P<topic>.+?) in our information")
_THANKS_WORDS = ("thanks", "thank", "cheers", "helpful", "appreciated", "goodbye", "bye", "thx")
_LETTERS = re.compile(r"[a-z']+")
_PIECE_SPLIT = re.compile(r",\s*|;\s*|\s+-\s+|:\s+")
_SENTENCES = re.compile(r"[^.!?]+[.!?]*")
_RELATIVE_DAY = re.compile(r"^(?:next|this|tomorrow|today|the day after|on)\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^\W*(?:(?:hi|hey|hello|ok|okay|and|so)(?: there)?\W+)*"
    r"(?:how|what|when|where|which|who|why|are|is|do|does|can|could|will|r u|u open)\b",
    re.IGNORECASE,
)
_INFO_QUESTION = re.compile(
    r"\b(?:how much|how long|price|cost|open|hours|policy|policies|what|when|which|where|"
    r"is there|are there|do (?:you|u)|does|tell me (?:about|more))\b",
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
    r"\d+(?:[.,]\d{2})?\s*(?:€|eur|euro|usd|\$|£|gbp|chf)|(?:€|\$|£)\s*\d|"
    r"\b(?:eur|usd|gbp|chf)\s*\d",
    re.I,
)
_QA_PREFIX = re.compile(r"^(?:Q|A|Answer|Question)\s*[:.)]\s*", re.IGNORECASE)
_HEADER = re.compile(r"^\s*(?:subject|from|to|cc|re|sent|date)\s*:", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(
    r"\?|;|,\s*(?:and|but)\s+|\s+and\s+(?=(?:r|are|is|do|does|what|when|how|can)\b)"
)
MAX_CLAUSES = 3
PASSAGES_PER_CLAUSE = 2
_PRICE_START = re.compile(r"^\W{0,3}(?:€|eur|euro|usd|gbp|chf|\$|£)?\s*\d", re.IGNORECASE)
# Two table rows or list items run together by noise ("... 30 min Hygiene clean - 80 EUR").
_ROW_SPLIT = re.compile(r"(?<=\bmin)\s+(?=[A-Z])|(?<=\))\s+(?=[A-Z])")
# "Check-up and exam costs 65 EUR and takes about 30 minutes."
_PRICE_PROSE = re.compile(
    r"^(?P<name>[A-Z][\w' -]{2,58}?)\s+costs?\s+(?:€|eur\b|euro\b|usd\b|\$|£|gbp\b|\d)", re.I
)
_NAME_SPLIT = re.compile(r"\s*(?:\||\s-\s|\s{2,}|:|\t|\.{2,}|–|—)\s*")


def reference_respond(request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
    """One turn of the reference assistant for `request` (see the module docstring)."""
    index = kb_index(request.kb)
    customer = [m.content for m in request.messages if m.role == "customer"]
    services = service_names(index)
    spoken = extract_spoken(request.intake_fields, customer, services)
    extracted = {key: value for key, (value, _) in spoken.items()}
    questions = info_questions(mask_free_text(request.intake_fields, customer[-1]))
    retrieved = [
        item
        for question in questions or [customer[-1]]
        for item in _retrieve(index, customer, question, services)
    ]
    passages = list(dict.fromkeys(p for item in retrieved for p in item.passages))
    messages = _prompt(request, passages)

    def compose() -> ResponderReply:
        reply, status = _compose(request, index, customer, spoken, services, questions)
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


def _expansions(text: str, index: KbIndex | None = None) -> list[str]:
    """Words to add to a query: what a kind of question looks for ("how much" -> price, eur),
    and the KB's own words of the same family as the ones asked with."""
    out = [words for pattern, words in _EXPANSIONS if pattern.search(text)]
    if index is not None:
        out += [w for word in content_words(text) for w in index.related(word)]
    return out


def _clauses(
    index: KbIndex, text: str, customer: list[str], services: list[str]
) -> list[tuple[str, str]]:
    """The clauses of a question as (clause, query); a short follow-up ("and how long does that
    take?") borrows the service last named in the conversation, or the previous message."""
    pieces = [p for p in _CLAUSE_SPLIT.split(text) if content_words(p)] or [text]
    named = [s for m in customer for s in services if s.casefold() in m.casefold()]
    context = named[-1] if named else (customer[-2] if len(customer) > 1 else "")
    queries = []
    for piece in pieces[:MAX_CLAUSES]:
        query = piece
        if len(content_words(piece)) < 3 and not any(
            s.casefold() in piece.casefold() for s in services
        ):
            query = f"{context} {piece}"
        queries.append((piece, " ".join([query, *_expansions(piece, index)])))
    return queries


@dataclass(frozen=True)
class Retrieved:
    clause: str
    query: str
    subject: str  # the service the clause is about, if any
    passages: list[Passage]


def _search(index: KbIndex, query: str, k: int) -> list[Passage]:
    """The `k` best passages for `query` that are written for customers (never the team's
    guidelines, internal emails or handover notes)."""
    hits = [p for _, p in index.search(query, k=k + 6)]
    return [p for p in hits if not is_internal(p) and _speaks_to_customers(p)][:k]


def _speaks_to_customers(passage: Passage) -> bool:
    """Has the passage a line a customer may be told (not only an FAQ's question and an
    instruction for the bot)?"""
    for raw in _reflow(passage.text):
        if raw.lstrip().startswith("#"):
            continue
        for piece in _pieces(raw):
            if piece and "?" not in piece and not is_directive(piece):
                return True
    return False


def _retrieve(
    index: KbIndex, customer: list[str], question: str, services: list[str]
) -> list[Retrieved]:
    """Per clause of `question`: its query, its subject and its best passages."""
    out = []
    for clause, query in _clauses(index, question, customer, services):
        named = [s for s in services if s.casefold() in query.casefold()]
        hits = _search(index, query, PASSAGES_PER_CLAUSE)
        out.append(Retrieved(clause, query, max(named, key=len) if named else "", hits))
    return out


def _question_part(sentence: str) -> str:
    """The question in a sentence that also says other things: from its first piece that
    opens like a question for information to the end ("hmm next Tuesday, is there parking
    near u?" -> "is there parking near u?"; "can i come in on the 19th, do i need to bring
    anything?" -> "do i need to bring anything?"); "" when it asks nothing."""
    cuts = list(_PIECE_SPLIT.finditer(sentence))
    starts = [0] + [m.end() for m in cuts]
    ends = [m.start() for m in cuts] + [len(sentence)]
    for start, end in zip(starts, ends, strict=True):
        piece = sentence[start:end]
        if _QUESTION_START.match(piece) and _is_question(f"{piece}?"):
            return sentence[start:].strip()
    return sentence.strip() if _is_question(sentence) else ""


def info_questions(message: str) -> list[str]:
    """The questions for information in a message, one per sentence ("Could I book one?" and
    "can i come in on Friday?" are bookings, not questions)."""
    out: list[str] = []
    for m in _SENTENCES.finditer(message):
        sentence = m.group(0).strip()
        part = _question_part(sentence) if "?" in sentence else sentence
        if not part or not _is_question(part) or _INJECTION.search(part):
            continue
        if out and len(content_words(part)) < 3:
            out[-1] = f"{out[-1]} {part}"  # "u open on Saturday? till when"
        else:
            out.append(part)
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
        if is_internal(passage):
            continue
        for raw in _reflow(passage.text):
            line = _clean(raw)
            if asked[0] not in days_covered(line) or len(line) > 160:
                continue
            if _CLOCK.search(line) or "closed" in line.casefold():
                # Prefer a plain statement of that day's hours over a longer mention.
                candidates.append((len(days_covered(line)) > 1, len(line), order, line))
    if not candidates:
        return None
    return index.repair(_sentence(min(candidates)[3]))


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
        primary = frozenset(
            content_words(" ".join([item.clause, *_expansions(item.clause, index)]))
        )
        best = _best_lines(
            item.passages, item.query, primary=primary, subject=item.subject, relevant=True
        )
        if item.subject and not any(about for _, about in best):
            # Nothing retrieved speaks about the service asked about: look for it by name,
            # and never pass another line's figure off as this service's.
            more = _search(index, " ".join([item.subject, *_expansions(item.clause, index)]), 6)
            best = _best_lines(
                [*more, *item.passages],
                item.query,
                primary=primary,
                subject=item.subject,
                relevant=True,
            )
            best = [(line, about) for line, about in best if about or not re.search(r"\d", line)]
        for line, about in best:
            line = index.repair(line)
            # Name the subject only for a line that is about it (under its heading); a line of
            # another service's section is never passed off as this one's.
            if about and item.subject.casefold() not in line.casefold():
                line = f"{item.subject}: {line}"
            if line not in lines:
                lines.append(line)
    return lines


def service_names(index: KbIndex) -> list[str]:
    """Service names as the KB's price lines spell them ("Hygiene clean | 80 EUR | 45 min",
    "Hygiene clean costs 80 EUR ..."), rows run together by noise taken apart."""
    names: dict[str, str] = {}
    lines = [
        piece
        for passage in index.passages
        for line in passage.text.splitlines()
        for piece in _ROW_SPLIT.split(line)
    ]
    for line in lines:
        prose = _PRICE_PROSE.match(_BULLET.sub("", line.strip()))
        if prose:
            _add_name(names, prose.group("name"))
            continue
        if not _MONEY_LINE.search(line) or len(re.findall(r"\w:\s", line)) > 1:
            continue
        pieces = _NAME_SPLIT.split(_BULLET.sub("", line.strip(" |")), maxsplit=1)
        if len(pieces) < 2 or not _PRICE_START.match(pieces[1]):
            continue  # a price line starts with the name, then the price
        _add_name(names, pieces[0])
    return sorted(names.values(), key=str.casefold)


def _add_name(names: dict[str, str], head: str) -> None:
    head = re.sub(r"\s*\(.*?\)\s*", " ", head).strip(" -:,.")
    if (
        3 <= len(head) <= 60
        and head[:1].isalnum()
        and not re.search(r"\d|[()]", head)
        and len(head.split()) <= 6
    ):
        names.setdefault(head.casefold(), head)


def _is_question(text: str) -> bool:
    """A request for information; "can I book X?" alone is a booking, not a question."""
    asks = "?" in text or bool(_INFO_QUESTION.search(text))
    if asks and _BOOKING.search(text) and not _INFO_QUESTION.search(text):
        return False
    return asks


def _clean(line: str) -> str:
    """A KB line as a sentence: no list marker, no table bars, no stray bullet inside it
    (two list items merged into one line by noise)."""
    line = _QA_PREFIX.sub("", _BULLET.sub("", line.strip()))
    line = _CELL_SEPARATORS.sub(" - ", line.strip("| ")).strip(" -")
    line = re.sub(r"\s[*•]+\s", " ", line)
    return re.sub(r"\s+", " ", line)


def _reflow(text: str) -> list[str]:
    """Lines of a passage, with a line broken mid-sentence joined to its continuation."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        continues = line[:1].islower() or (
            # "... less than" / "24 hours notice ...": a number carries the sentence on.
            line[:1].isdigit() and not _BULLET.match(line) and lines and lines[-1][-1:].islower()
        )
        if lines and continues and lines[-1][-1:] not in ".!?:|":
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
    relevant: bool = False,
) -> list[tuple[str, bool]]:
    """The lines (or sentences) of the passages that share most content words with the query,
    each with whether it is about `subject` (names it, or sits under a heading naming it).

    Headings, e-mail headers and the FAQ's own questions never win; when the customer asks
    for a figure (price, duration, hours) a line holding one is preferred; when the question
    is about a service and some line is about it, only such lines are candidates (so "how long
    does a child check-up take?" is never answered with another service's duration). With
    `relevant`, a line must share a word with the question itself (`primary`), not only with
    the context it borrowed. Text for staff or the bot (internal documents, instructions such
    as "Collect full name ...") is never a candidate."""
    terms = set(content_words(query))
    wants_figure = any(w in terms for w in ("price", "minute", "hour"))
    wanted = subject.casefold()
    scored: list[tuple[int, int, str, bool]] = []
    order = 0
    for passage in passages:
        if is_internal(passage):
            continue
        heading = ""
        for raw in _reflow(passage.text):
            if raw.lstrip().startswith("#"):
                heading = raw.casefold()
                continue
            if _HEADER.match(raw):
                continue
            for piece in _pieces(raw):
                order += 1
                has_digit = bool(re.search(r"\d", piece))
                size = len([w for w in piece.split() if any(c.isalnum() for c in w)])
                if size < (3 if has_digit else 5) or "?" in piece or is_directive(piece):
                    continue
                piece_terms = set(content_words(piece))
                if relevant and primary and not primary & piece_terms:
                    continue
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


def _pieces(raw: str) -> list[str]:
    """The sentences of a KB line, each cleaned ("Q: ... ? A: ..." merged by noise gives the
    question and the answer without its "A:"; two table rows run together give two rows)."""
    return [
        _clean(piece)
        for row in _ROW_SPLIT.split(raw)
        for piece in _SENTENCE_END.split(_clean(row))
        if piece.strip()
    ]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else f"{text}."


def _unknown_terms(
    index: KbIndex,
    text: str,
    services: list[str],
    stated: dict[str, str] | None = None,
    *,
    exact: bool = False,
) -> list[str]:
    """Words of the question the KB never uses: what the customer asks about that we lack.
    The customer's own details in the same message (a name, an e-mail) are not topics. With
    `exact` (the thing a customer asks whether we offer), a word must be the KB's own word or
    of its family, not merely start like one ("motorbike" is not "motor")."""
    known = {w for s in services for w in content_words(s)}
    known |= {w for value in (stated or {}).values() for w in content_words(value)}
    words = [w for w in content_words(text) if len(w) >= 4 and w not in known]
    words = [w for w in words if w not in _TOPIC_FILLER]
    if exact:
        return [w for w in words if w not in index.vocabulary and not index.related(w)]
    return [w for w in words if not index.knows(w)]


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
        options = f": {_listing(services, 'or')}" if services else ""
        return f"Just tell me the {needed} you'd like and I will note it{options}."
    return f"To pass on your request I still need your {needed}."


def _listing(names: list[str], last: str = "and") -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def _suggest(services: list[str]) -> str:
    """For a customer who is not sure what they need: what we offer, and which fits."""
    if not services:
        return (
            "Could you tell me a little about what you need, so I can find the right appointment?"
        )
    return f"Which of these sounds closest to what you need: {_listing(services, 'or')}?"


def _asks_for(field: IntakeFieldRef, reply: str) -> bool:
    """Did `reply` ask for this field (its label in a question)?"""
    questions = [s for s in _SENTENCES.findall(reply) if "?" in s]
    return any(_label(field).casefold() in q.casefold() for q in questions)


def _booking_question(
    request: ResponderRequest, extracted: dict[str, str], services: list[str], last: str
) -> str | None:
    """What to ask next for the booking (None when every required field is in), without
    asking the same question twice: a customer who is not sure which service they want is
    offered the services (at once when they ask for a suggestion, else once the other details
    are in) and asked for the rest meanwhile."""
    required = sorted(
        (f for f in request.intake_fields if f.required), key=lambda f: field_kind(f) != "service"
    )
    missing = [f for f in required if f.key not in extracted]
    if not missing:
        return None
    previous = [m.content for m in request.messages if m.role == "assistant"]
    service = next((f for f in missing if field_kind(f) == "service"), None)
    others = [f for f in missing if f is not service]
    asked_service = service is not None and any(_asks_for(service, m) for m in previous)
    if service is not None and _SUGGEST.search(last):
        question = _suggest(services)
    elif service is not None and asked_service and others:
        unsure = previous and _asks_for(service, previous[-1])
        lead = f"No problem if you're not sure which {_label(service)} yet. " if unsure else ""
        question = lead + _ask(others)
    elif service is not None and asked_service:
        question = _suggest(services)
    else:
        question = _ask(missing)
    if any(question in m for m in previous):
        # The same question again would get the same answer: say what is missing instead.
        question = _nudge(missing, services)
    return question


def _when(fields: list[IntakeFieldRef], spoken: dict[str, tuple[str, str]]) -> str:
    """The booking's service, day and time, the day and time in the customer's own words
    ("for Hygiene clean next Tuesday around 11")."""
    words = {field_kind(f): spoken[f.key] for f in fields if f.key in spoken}
    parts = []
    if "service" in words:
        parts.append(f"for {words['service'][0]}")
    if "date" in words:
        said = mid_sentence(words["date"][1])
        parts.append(said if _RELATIVE_DAY.match(said) else f"on {said}")
    if "time" in words:
        said = mid_sentence(words["time"][1])
        parts.append(said if re.match(r"(?:at|around|about)\b", said, re.I) else f"at {said}")
    return " ".join(parts)


def _summary(fields: list[IntakeFieldRef], spoken: dict[str, tuple[str, str]]) -> str:
    by_kind = {field_kind(f): spoken[f.key][0] for f in fields if f.key in spoken}
    who = f", {by_kind['name']}" if "name" in by_kind else ""
    what = _when(fields, spoken) or "with the details you gave"
    return (
        f"Thank you{who}. I have passed on your booking request {what}; "
        "the team will confirm it with you."
    )


def _same_day(a: str, b: str) -> bool:
    """Do two date values name the same day, one perhaps more fully ("the 28th" / "Saturday
    the 28th")?"""
    if a.casefold() == b.casefold():
        return True
    pa, pb = find_dates(a), find_dates(b)
    if not (pa and pb) or pa[0].day is None or pa[0].day != pb[0].day:
        return False
    x, y = pa[0], pb[0]
    months = x.month is None or y.month is None or x.month == y.month
    weekdays = x.weekday is None or y.weekday is None or x.weekday == y.weekday
    return months and weekdays


def _changed(
    fields: list[IntakeFieldRef], customer: list[str], services: list[str]
) -> list[tuple[IntakeFieldRef, str]]:
    """Fields whose value the last message changes (a correction or a change of mind), with
    the customer's words for the new value."""
    if len(customer) < 2:
        return []
    before = extract_spoken(fields, customer[:-1], services)
    now = extract_spoken(fields, customer[-1:], services)
    changed = []
    for f in fields:
        if f.key not in now or f.key not in before:
            continue
        new, old = now[f.key][0], before[f.key][0]
        same = _same_day(new, old) if field_kind(f) == "date" else new == old
        if not same:
            changed.append((f, now[f.key][1]))
    return changed


def _noted(fields: list[IntakeFieldRef], customer: list[str], services: list[str]) -> str:
    """ "Thanks, next Tuesday around 11 is noted.": the day and time the last message gives,
    read back in the customer's words while the booking still lacks something."""
    now = extract_spoken(fields, customer[-1:], services)
    words = [now[f.key][1] for f in fields if f.key in now and field_kind(f) == "date"]
    words += [
        w if re.match(r"(?:at|around|about)\b", w, re.I) else f"at {w}"
        for w in (now[f.key][1] for f in fields if f.key in now and field_kind(f) == "time")
    ]
    if not words:
        return ""
    said = re.sub(r"^on\s+", "", mid_sentence(" ".join(words)), flags=re.IGNORECASE)
    return f"Thanks, {said} is noted."


_SENTENCE_OPENER = re.compile(r"^(?:Next|This|The|On|Tomorrow|Today|At|Around|About)\b")


def mid_sentence(words: str) -> str:
    """The customer's words for a day or time, read back inside a sentence ("Next Tuesday"
    at the start of their message is "next Tuesday" in ours)."""
    return _SENTENCE_OPENER.sub(lambda m: m.group(0).lower(), words.strip())


def _small_talk(message: str) -> bool:
    """Thanks and goodbyes ("great, thanks - you've been very helpful!"), typos and all."""
    words = _LETTERS.findall(message.casefold())
    if not words or len(words) > 14 or "?" in message:
        return False
    return any(difflib.get_close_matches(w, _THANKS_WORDS, 1, 0.8) for w in words if len(w) > 2)


def _topic(question: str) -> tuple[str, str]:
    """What a question asks about, as a short noun phrase, and how it asks: "offer" (do you
    do X?), "exists" (is there X?), "todo" (do I need to bring ...?) or "" (anything else)."""
    for pattern, kind in zip(_TOPIC, ("offer", "exists", "todo"), strict=True):
        m = pattern.search(question)
        if not m:
            continue
        if kind == "todo":
            return f"what to {m.group('todo').casefold()}", kind
        topic = _TOPIC_TAIL.sub("", m.group("topic")).strip(" -")
        topic = re.sub(r"^any\s+", "", topic, flags=re.IGNORECASE)
        topic = re.sub(r"^(?:anywhere|somewhere) to\b", "where to", topic, flags=re.IGNORECASE)
        if topic and len(topic.split()) <= 6:
            return topic, kind
    return "", ""


def _decline(
    question: str,
    unknown: list[str],
    previous_reply: str,
    stated: dict[str, str],
    *,
    price: bool = False,
) -> str:
    """An honest "our information does not cover this", worded for the question asked."""
    topic, kind = _topic(question)
    if topic and any(v and v.casefold() in topic.casefold() for v in stated.values()):
        topic = ""  # the customer's own details are not the subject
    declined = _DECLINED.search(previous_reply)
    if declined and kind in ("exists", "") and _REFERS_BACK.search(question):
        what = topic or "that"
        return (
            f"I'm sorry, I can't find {declined.group('topic')} in our information at all, so I "
            f"can't tell you about {what} for it either."
        )
    what = topic or " ".join(unknown[:3]) or "that"
    if kind == "offer":
        quote = " or quote a price" if price or _PRICE_ASKED.search(question) else ""
        return (
            f"I'm sorry, I can't find anything about {what} in our information, so I can't "
            f"confirm that we offer it{quote}."
        )
    if kind == "exists":
        plural = _EXISTS_QUESTION.search(question)
        whether = (
            "whether there are any"
            if plural and plural.group(1).casefold() == "are"
            else ("whether there is one")
        )
        return (
            f"I'm sorry, I can't find anything about {what} in our information, so I can't say "
            f"{whether}. If you like, I can pass the question on to the team."
        )
    return (
        f"I'm sorry, I can't find anything about {what} in our information. If you like, I can "
        "pass the question on to the team."
    )


def _follow_up(
    index: KbIndex, customer: list[str], question: str, services: list[str]
) -> str | None:
    """ "Does that also apply to <service>?" after a policy question: about that policy."""
    if len(customer) < 2 or not _FOLLOW_UP.search(question):
        return None
    earlier = next((m for m in reversed(customer[:-1]) if _POLICY_TOPIC.search(m)), None)
    if earlier is None:
        return None
    lines = [
        line
        for q in info_questions(earlier) or [earlier]
        for line in _answer_lines(_retrieve(index, customer[:-1], q, services), index)
    ]
    if not lines:
        return None
    named = [s for s in services if s.casefold() in question.casefold()]
    what = max(named, key=len) if named else "that"
    # The policy as quoted, then a sentence naming the service without any figure (so no
    # price or duration is ever bound to the service).
    return (
        f"{lines[0]} I can't see any exception for {what} in our information, so that applies too."
    )


def _answers(
    request: ResponderRequest,
    index: KbIndex,
    customer: list[str],
    questions: list[str],
    services: list[str],
) -> list[str]:
    """One answer per question of the last message: the KB lines that answer it, or an
    honest decline that fits it."""
    previous = [m.content for m in request.messages if m.role == "assistant"]
    previous_reply = previous[-1] if previous else ""
    parts: list[str] = []
    declined = False
    for question in questions:
        if declined and len(content_words(question)) < 3:
            continue  # "do u do X? how much?": the decline of X answers the rest too
        follow_up = _follow_up(index, customer, question, services)
        if follow_up:
            parts.append(follow_up)
            continue
        stated = extract_fields(request.intake_fields, [question], services)
        topic, kind = _topic(question)
        exact = kind in ("offer", "exists")
        unknown = _unknown_terms(index, topic or question, services, stated, exact=exact)
        lines = [] if unknown and kind in ("offer", "exists") else None
        if lines is None:
            lines = _answer_lines(_retrieve(index, customer, question, services), index)
        if lines:
            parts += [line for line in lines if line not in parts]
        elif _SUGGEST.search(question) or re.search(r"what do (?:you|u) (?:do|offer)", question):
            parts.append(_suggest(services))
        else:
            price = bool(_PRICE_ASKED.search(" ".join(questions)))
            parts.append(_decline(question, unknown, previous_reply, stated, price=price))
            declined = True
    return parts


def _wants_booking(message: str, services: list[str]) -> bool:
    """Does the customer ask to book? A service's own name ("Emergency appointment") is not a
    request, nor is "before I book" or "I'd rather not come in"."""
    text = message
    for name in services:
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return bool(_BOOKING.search(text)) and not _NEGATED_BOOKING.search(text)


def _compose(
    request: ResponderRequest,
    index: KbIndex,
    customer: list[str],
    spoken: dict[str, tuple[str, str]],
    services: list[str],
    questions: list[str],
) -> tuple[str, str]:
    last = customer[-1]
    extracted = {key: value for key, (value, _) in spoken.items()}
    parts: list[str] = []

    wants_booking = _wants_booking(last, services)
    safety = bool(_SAFETY.search(last)) or (
        any(_SAFETY.search(m) for m in customer[:-1]) and not wants_booking
    )
    if safety:
        parts.append(
            "I'm sorry to hear that. I can't give medical, technical or safety advice over chat."
        )
        # About the problem the customer described, even when they only ask "what do I do?".
        about = (
            last
            if _SAFETY.search(last)
            else next((m for m in reversed(customer) if _SAFETY.search(m)), last)
        )
        parts += [
            index.repair(line)
            for line, _ in _best_lines(
                _search(index, f"{about} emergency urgent call appointment", 3),
                f"{about} emergency urgent call",
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

    booking = any(_wants_booking(m, services) for m in customer)
    fields = request.intake_fields
    changes = _changed(fields, customer, services)
    if changes and booking:
        what = " and ".join(f"the {_label(f)} to {mid_sentence(words)}" for f, words in changes)
        parts.append(f"No problem, I've changed {what}.")
    if not injection:
        asked = [q for q in questions if not (booking and _SUGGEST.search(q))]
        parts += _answers(request, index, customer, asked, services)
    thanks = _small_talk(last) and not questions and not changes

    if booking:
        question = _booking_question(request, extracted, services, last)
        if question:
            if thanks:
                parts.insert(0, "You're welcome!")
            noted = "" if changes else _noted(fields, customer, services)
            if noted:
                parts.insert(0, noted)
            parts.append(question)
            return " ".join(p for p in parts if p), "AWAITING_RESPONSE"
        summary = _summary(fields, spoken)
        already = any(summary in m.content for m in request.messages if m.role == "assistant")
        if thanks and already:
            parts.append(
                "You're welcome - the team will confirm your booking with you. Have a lovely day!"
            )
        else:
            parts.append(summary)
        return " ".join(parts), "COMPLETE"
    if thanks:
        return "You're welcome! Have a lovely day.", "COMPLETE"
    if not parts:
        return "Thanks for your message. How can I help you today?", "AWAITING_RESPONSE"
    return " ".join(parts), "COMPLETE"
