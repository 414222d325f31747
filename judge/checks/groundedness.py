"""Check: reply sentences that state something the KB fixture does not support.

For every substantive reply sentence (see `claim_of`: questions, greetings, refusals, intake
requests, "not something we offer" and the assistant narrating its own actions are skipped,
and leading framing such as "Here is what our information says:" is cut off) the check
retrieves the TOP_PASSAGES best BM25 passages of the fixture (overlapping 4-line windows,
index cached per fixture text) and scores each ";"-clause with
`judge.support.support_score` against them, with the customer's messages as history and
the assistant's own voice ("we", "our", "you", "costs", "takes" ...) ignored. A sentence is
ungrounded when its weakest clause scores below UNGROUNDED_THRESHOLD (the threshold calibrated
on response-level data by `qalab_calibrate --data`), or when it attaches a price, duration,
percentage or clock time that the fixture gives only for something else (`misbound_numbers`: an
entity swap that word overlap cannot see). A finding needs more: see FINDING_THRESHOLD; one minor finding per reply,
quoting its least supported such sentence verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rank_bm25 import BM25Okapi

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.support import (
    FUNCTION_WORDS,
    UNGROUNDED_THRESHOLD,
    Knowledge,
    clock_24h,
    sentences,
    stem,
    support_score,
    tokens,
)
from judge.text import Sentence, spaced, split_sentences

# Passages: windows of PASSAGE_LINES non-empty fixture lines, overlapping by half, so a fact
# split over two lines (a table header and its row, a heading and its paragraph) stays whole.
PASSAGE_LINES = 4
PASSAGE_STRIDE = 2
TOP_PASSAGES = 3
# Lines above a figure that may name its subject (see misbound_numbers).
CONTEXT_LINES = 2
# A figure the KB gives for something else is a precise signal, but lines can be far apart.
MISBOUND_CONFIDENCE = 0.7
# Smaller figures ("1.5 hours", "2 visits") are everywhere in a KB; binding them means nothing.
MIN_FIGURE = 5
# A claim needs this many words that are neither function words nor the assistant's voice.
MIN_CLAIM_WORDS = 2

# The assistant speaks for the business and to the customer: its pronouns and framing words
# ("here is what our information says"), and the verbs that glue a KB table cell into a
# sentence ("costs", "takes"), are never a claim the KB has to spell.
ASSISTANT_VOICE = (
    "i me my mine we us our ours you your yours i'm i've i'll i'd we're we've we'll we'd "
    "you're you've you'll you'd here information info says say said team "
    "please happy glad help yes yeah sure certainly absolutely course great perfect good news "
    "just cost costs costing take takes taking last lasts charge charges offer offers "
    "provide provides available until till around about approximately roughly can will "
    "need needs"
)
# Units and price words: a figure's line must share a word other than these with the sentence.
UNIT_WORDS = frozenset(
    stem(w)
    for w in tokens(
        "eur usd gbp chf price prices fee fees cost costs min hour day days week weeks month "
        "months year years percent time times duration"
    )
)

_FRAMING = re.compile(
    r"^\W*(?:(?:yes|yeah|sure|certainly|absolutely|of course|great|perfect|good news|ok(?:ay)?|"
    r"happy to help|i(?:'m| am) (?:so |very )?sorry|sorry|apologies|unfortunately|"
    r"i(?:'m| am) afraid(?: that)?|(?:but|and|so|also|however|in that case)(?=[\s,]))"
    r"\b[\s,!.:;-]*)*"
    r"(?:(?:here(?:'s| is) what (?:our|the) (?:information|kb|website|price list|notes?) says|"
    r"according to (?:our|the) (?:information|kb|website|price list|notes?)|"
    r"(?:our|the) (?:information|kb|website|price list) says|"
    r"i can (?:confirm|tell you|say|see)(?: that)?|i(?:'m| am) happy to confirm(?: that)?|"
    r"just so you know|to answer your question)\b[\s,:;-]*)?",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"^\W*(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|thanks?|thank you|"
    r"you(?:'re| are) welcome|welcome|bye|goodbye|see you|have a (?:nice|good|great|lovely)|"
    r"no problem|no worries)\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\bi\s*(?:'m|am)?\s*(?:can(?:no|')t|cannot|can not|could(?:n't| not)|unable|not able|"
    r"do(?:n't| not)|won't|will not|am not|'m not)\b|\bno information\b|"
    r"\b(?:not|never) (?:able to )?(?:give|provide|offer) (?:medical|legal|financial|safety)|"
    r"\bwe (?:can(?:no|')t|cannot|can not|are (?:not able|unable) to) (?:recommend|advise|"
    r"diagnose|prescribe|say|tell|judge|confirm|promise|guarantee)\b|"
    r"\b(?:hard|difficult|impossible) to (?:say|tell|judge|know)\b",
    re.IGNORECASE,
)
# Saying the business does not offer something the KB does not list is the safe answer, not a
# claim the KB has to support (a wrong denial of a listed service is contradicts_manifest's).
_NOT_OFFERED = re.compile(
    r"\bwe\s+(?:do(?:n't| not)|can(?:no|')t|cannot|can not)\s+(?:offer|do|provide|have|sell|"
    r"stock|carry|fit|repair|treat)\b|\b(?:isn't|aren't|is not|are not|not) something we\b|"
    r"\bnot (?:something|a (?:service|treatment)) (?:we|that we) (?:offer|do|provide)\b",
    re.IGNORECASE,
)
_INTAKE = re.compile(
    r"\b(?:(?:could|can|would|will) you (?:please )?(?:tell|give|send|share|provide|confirm|"
    r"let)|please (?:tell|give|send|share|provide|confirm|let|reply)|let (?:me|us) know|"
    r"tell me (?:your|the|which|what|when|if|how)|i (?:still )?need (?:your|the|a|to know)|"
    r"i(?:'ll| will) need|may i (?:have|ask)|what(?:'s| is) your)\b",
    re.IGNORECASE,
)
# The assistant narrating its own action ("I have passed on your request", "I'll note it").
_OWN_ACTION = re.compile(
    r"^\W*(?:\w+\W+){0,3}?i(?:'ve|'ll|'d| have| will| would| can| could| am|'m)?\s+"
    r"(?:also\s+|now\s+|just\s+|gladly\s+)?"
    r"(?:pass|passed|note|noted|forward|forwarded|send|sent|record|recorded|log|logged|add|"
    r"added|arrange|arranged|book|booked|reserve|reserved|put|make|made|check|checked|ask|"
    r"asked|let|get|flag|flagged|share|shared|help|assist|request|requested)\b",
    re.IGNORECASE,
)
# The state of the customer's own request is the final-status check's business, not the KB's.
_REQUEST_STATE = re.compile(
    r"\byour (?:booking|appointment|request|reservation|details?|order)\b[^.!?]{0,30}"
    r"\b(?:is|are|has been|have been|was|were)\b[^.!?]{0,20}\b(?:confirmed|booked|received|"
    r"noted|sent|passed on|forwarded|recorded|reserved|registered|complete)\b|"
    r"\bsee you (?:soon|then|on|at)\b",
    re.IGNORECASE,
)
# Feelings, wishes and rapport state nothing about the business: "Oh no, that's so
# frustrating!", "I hope it arrives soon", "Congratulations on the move", "Let's have a look".
_RAPPORT = re.compile(
    r"^\W*(?:(?:oh|ah|aw+|hmm+|well|and|so|ok(?:ay)?|right)\W+)*(?:oh no|"
    r"(?:i(?:'m| am) )?(?:so |very |really )?sorry (?:to hear|about|for|again)|"
    r"i (?:do |sincerely )?apologi[sz]e|(?:i |we )?hope\b|fingers crossed|congratulations|"
    r"congrats|how (?:exciting|lovely|nice|wonderful|frustrating|annoying)|good luck|best of luck|"
    r"enjoy|take care|ride safe|safe travels|let'?s (?:have a look|take a look|see|try|figure|"
    r"get (?:this|that|you))|got (?:it|them|that|those)\b|you(?:'re| are) (?:very |most |so )?"
    r"welcome|i (?:totally |completely |really )?(?:get it|understand|hear you|know (?:how|what))|"
    r"that(?:'s| is| sounds) (?:so |really |very )?(?:frustrating|annoying|stressful|"
    r"exciting|lovely|great|awful|a pain))",
    re.IGNORECASE,
)
# Longer than this, a sentence that opens with rapport may go on to state something ("Oh no,
# we're closed on Sundays, but ...").
RAPPORT_WORDS = 12
# A heading or a label with a short value: "You have the following options:", "Drop-off:
# Manchester, Sunday", "Tracking number: SW-88413-UK" (a readback, not a claim).
_LABEL = re.compile(r"^\W*(?:[^:.!?]{1,60}:\s*$|[\w /'()-]{1,30}:\s+\S+(?:\s+\S+){0,5}$)")
_VOICE_WORDS = frozenset(stem(w) for w in tokens(ASSISTANT_VOICE))
# Figures whose subject can be checked: amounts (money, percentages, durations) and clock
# times; not phone numbers, dates or counts.
_AMOUNT = re.compile(
    r"(?:€|\$|£)\s*(\d+)|"
    r"\b(\d+)(?:[.,]\d{1,2})?\s*(?:€|eur\b|euros?\b|usd\b|dollars?\b|gbp\b|pounds?\b|chf\b|"
    r"%|percent\b|per cent\b|min\b|mins\b|minutes?\b|h\b|hrs?\b|hours?\b|days?\b|weeks?\b)",
    re.IGNORECASE,
)
_CLOCK = re.compile(r"\b(\d{1,2})[:.]\d{2}\b")
_CLAUSE = re.compile(r"\s*;\s*")


def _numbers(pattern: re.Pattern[str], text: str) -> list[str]:
    return [str(int(next(g for g in m.groups() if g))) for m in pattern.finditer(text)]


def figures(claim: str) -> list[str]:
    """The amounts and clock hours a claim states, as normalised number tokens."""
    text = clock_24h(claim)
    return list(dict.fromkeys(_numbers(_AMOUNT, text) + _numbers(_CLOCK, text)))


def claim_of(sentence: str) -> str | None:
    """The part of a reply sentence that states a checkable fact, or None when the sentence
    is not substantive: a question, a greeting, a refusal, saying something is not offered,
    an intake request, the assistant narrating its own action or the state of the customer's
    request, or too few content words. Leading framing ("Sure,", "Here is what our
    information says:", "Unfortunately,") is cut off."""
    if "?" in sentence or _PLEASANTRY.match(sentence) or _REFUSAL.search(sentence):
        return None
    if (_RAPPORT.match(sentence) and len(tokens(sentence)) <= RAPPORT_WORDS) or _LABEL.match(
        sentence.strip()
    ):
        return None
    if _NOT_OFFERED.search(sentence):
        return None
    if _INTAKE.search(sentence) or _OWN_ACTION.match(sentence) or _REQUEST_STATE.search(sentence):
        return None
    claim = _FRAMING.sub("", sentence, count=1).strip()
    words = [
        w
        for w in tokens(claim)
        if w not in FUNCTION_WORDS and stem(w) not in _VOICE_WORDS and len(w) > 1
    ]
    return claim if len(words) >= MIN_CLAIM_WORDS else None


@dataclass(frozen=True)
class PassageIndex:
    """BM25 over overlapping line windows of one fixture text, plus, per number, the stems of
    the fixture lines (with their neighbours) that state it."""

    passages: tuple[str, ...]
    bm25: BM25Okapi | None
    number_lines: dict[str, tuple[frozenset[str], ...]]

    def top(self, query: str, k: int = TOP_PASSAGES) -> list[str]:
        """The `k` passages that best match `query` (in rank order)."""
        terms = [stem(w) for w in tokens(query) if w not in FUNCTION_WORDS]
        if self.bm25 is None or not terms:
            return list(self.passages[:k])
        scores = self.bm25.get_scores(terms)
        ranked = sorted(range(len(self.passages)), key=lambda i: (-scores[i], i))
        return [self.passages[i] for i in ranked[:k]]


def _passages(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) <= PASSAGE_LINES:
        return ["\n".join(lines)] if lines else []
    starts = range(0, len(lines) - PASSAGE_STRIDE, PASSAGE_STRIDE)
    return ["\n".join(lines[s : s + PASSAGE_LINES]) for s in starts]


def _number_lines(text: str) -> dict[str, tuple[frozenset[str], ...]]:
    """Per number: the stems of each fixture line stating it, with the CONTEXT_LINES lines
    above it and the nearest heading (a figure's subject is often named above it:
    "## Hygiene clean" ... "Duration: 45 min. Price: 80 EUR.")."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    stems = [frozenset(stem(w) for w in tokens(line)) for line in lines]
    found: dict[str, list[frozenset[str]]] = {}
    heading: frozenset[str] = frozenset()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            heading = stems[i]
        context = heading.union(*stems[max(0, i - CONTEXT_LINES) : i + 1])
        for word in stems[i]:
            if word[:1].isdigit():
                found.setdefault(word, []).append(context)
    return {number: tuple(contexts) for number, contexts in found.items()}


@lru_cache(maxsize=64)
def passage_index(text: str) -> PassageIndex:
    """The passage index of a fixture text (cached: a run judges many cases per fixture)."""
    passages = _passages(text)
    corpus = [[stem(w) for w in tokens(p)] for p in passages]
    bm25 = BM25Okapi(corpus) if passages and any(corpus) else None
    return PassageIndex(tuple(passages), bm25, _number_lines(text))


def _subject(text: str) -> set[str]:
    """Stems that can name what a figure is about: no numbers, units or assistant voice."""
    stems = {stem(w) for w in tokens(text) if w not in FUNCTION_WORDS}
    return {
        s
        for s in stems
        if not s[:1].isdigit()
        and s not in FUNCTION_WORDS
        and s not in UNIT_WORDS
        and s not in _VOICE_WORDS
    }


def misbound_numbers(index: PassageIndex, claim: str, question: str = "") -> list[str]:
    """Figures of `claim` (money, durations, percentages, clock hours; MIN_FIGURE or more) that
    the fixture states, but never on a line (or under a heading) that names what the claim -
    or the customer's `question` it answers - attaches them to: a price or duration moved from
    one service to another. Figures the KB never states are left to `unsupported_facts`."""
    subject = _subject(claim) | _subject(question)
    if not subject:
        return []
    out: list[str] = []
    for number in figures(claim):
        contexts = index.number_lines.get(number)
        if int(number) < MIN_FIGURE or not contexts:
            continue
        if not any(subject & context for context in contexts):
            out.append(number)
    return out


@dataclass(frozen=True)
class Scored:
    """One substantive reply sentence, its support and the passage closest to it."""

    turn: int
    quote: str
    support: float
    closest: str
    misbound: tuple[str, ...] = ()

    @property
    def ungrounded(self) -> bool:
        return self.support < UNGROUNDED_THRESHOLD or bool(self.misbound)


_ABBREVIATION = re.compile(
    r"\b(?:dr|mr|mrs|ms|st|prof|no|nr|approx|incl|excl|e\.g|i\.e|etc|vs)\.$", re.IGNORECASE
)


def reply_sentences(reply: str) -> list[Sentence]:
    """The sentences of a reply, with a break after "Dr." or "e.g." undone; each `text` is
    still exactly `reply[start:end]`."""
    merged: list[Sentence] = []
    for sentence in split_sentences(reply):
        if merged and _ABBREVIATION.search(merged[-1].text):
            start = merged[-1].start
            merged[-1] = Sentence(start, sentence.end, reply[start : sentence.end])
        else:
            merged.append(sentence)
    return merged


def _closest_line(passages: list[str], claim: str) -> str:
    """The knowledge line sharing most words with the claim (for the rationale)."""
    wanted = {stem(w) for w in tokens(claim) if w not in FUNCTION_WORDS}
    lines = [line for p in passages for line in sentences(p)]
    if not lines:
        return ""
    return max(lines, key=lambda line: len(wanted & {stem(w) for w in tokens(line)}))


def score_replies(case: CaseTranscript) -> list[Scored]:
    """Every substantive reply sentence of the case with its support by the fixture's best
    passages. A sentence is scored per clause (split at ";"), keeping the weakest clause. The
    customer's messages so far are history (fair to echo, counted half); the numbers the
    customer gave (a phone number, a date, a time) are not claims, except amounts."""
    index = passage_index(case.fixture.text)
    scored: list[Scored] = []
    said: list[str] = []
    for turn in case.turns:
        said.append(turn.customer)
        history = "\n".join(said)
        given = {w for w in tokens(history) if w[:1].isdigit()}
        for sentence in reply_sentences(turn.reply):
            if _REFUSAL.search(sentence.text) or _NOT_OFFERED.search(sentence.text):
                continue  # the rest of a refusal is its routing ("the dentist will advise")
            clauses: list[tuple[float, str]] = []
            for clause in _CLAUSE.split(sentence.text):
                claim = claim_of(clause)
                if claim is None:
                    continue
                passages = index.top(claim)
                echoed = " ".join(sorted(given - set(_numbers(_AMOUNT, clock_24h(claim)))))
                support = support_score(
                    Knowledge("\n".join(passages)),
                    claim,
                    history,
                    ignore=(ASSISTANT_VOICE, echoed),
                )
                clauses.append((support, _closest_line(passages, claim)))
            if clauses:
                support, closest = min(clauses, key=lambda c: c[0])
                misbound = tuple(misbound_numbers(index, sentence.text, turn.customer))
                scored.append(Scored(turn.index, sentence.text, support, closest, misbound))
    return scored


def _confidence(support: float) -> float:
    """0.5 at the threshold, rising linearly to 1.0 at zero support."""
    return round(min(1.0, 0.5 + 0.5 * (UNGROUNDED_THRESHOLD - support) / UNGROUNDED_THRESHOLD), 2)


# A finding needs clearer evidence than the calibrated threshold: read against human labels on
# natural bot transcripts, sentences scoring 0.1-0.3 were no likelier to be unsupported than
# any other reply sentence (chatty bots paraphrase their KB), so only a sentence the KB
# barely touches, or a figure bound to the wrong thing, is reported.
FINDING_THRESHOLD = 0.2


def _reportable(item: Scored) -> bool:
    return item.support < FINDING_THRESHOLD or bool(item.misbound)


class Groundedness(Check):
    """Guarantees: of the substantive reply sentences (not a question, greeting, refusal,
    intake request, "not offered" answer, the assistant narrating its own action or the state
    of the customer's request) of one reply, the least supported that either scores below
    FINDING_THRESHOLD against the fixture's best-matching passages (a clause of it) or attaches
    a price, duration, percentage or clock time the fixture gives only for something else
    yields one minor finding quoting it verbatim: at most one per reply, a weak lexical signal
    (the LLM judge, with the openai engine, judges meaning). Confidence: 0.5 at the
    calibrated UNGROUNDED_THRESHOLD rising to 1.0 at zero support; 0.7 for a misbound figure
    alone."""

    rule = Rule(
        "ungrounded_sentence",
        "minor",
        "deterministic",
        "prompt",
        "A reply whose least supported substantive sentence the best-matching passages of the "
        "fixture barely touch (support score under {FINDING_THRESHOLD}; the score's calibrated "
        "threshold, {UNGROUNDED_THRESHOLD}, is where qalab_calibrate --data measures it on "
        "response-level data), or that binds a KB figure to something else; one per reply, a "
        "weak lexical signal.",
        action="Answer only with what the KB supports",
        thresholds={
            "FINDING_THRESHOLD": FINDING_THRESHOLD,
            "UNGROUNDED_THRESHOLD": UNGROUNDED_THRESHOLD,
        },
    )
    needs = frozenset({"kb"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        weakest: dict[int, Scored] = {}
        for item in score_replies(case):
            if _reportable(item) and (
                item.turn not in weakest or item.support < weakest[item.turn].support
            ):
                weakest[item.turn] = item
        for item in weakest.values():
            closest = f" The closest KB line is '{item.closest[:160]}'." if item.closest else ""
            if item.support < FINDING_THRESHOLD:
                rationale = (
                    f"The KB fixture barely supports this sentence (support {item.support:.2f} "
                    f"< {FINDING_THRESHOLD}): most of what it states appears nowhere in the "
                    f"passages that match it best.{closest}"
                )
                confidence = _confidence(item.support)
            else:
                figures = ", ".join(item.misbound)
                rationale = (
                    f"The sentence attaches {figures} to something the KB never gives that "
                    f"figure for: the KB states {figures} only about other things.{closest}"
                )
                confidence = MISBOUND_CONFIDENCE
            findings.append(
                self.finding(
                    case,
                    turn_index=item.turn,
                    subject=item.quote[:200],
                    key=spaced(item.quote)[:120],
                    evidence=[Evidence(source="reply", quote=item.quote, turn=item.turn)],
                    rationale=rationale,
                    fix_text=(
                        "Instruct the responder to state only what the retrieved KB passages "
                        "say, in their terms, and to say plainly when the KB does not cover a "
                        "question; if the sentence is true, add it to the KB."
                    ),
                    effort="M",
                    confidence=confidence,
                )
            )
        return findings
