"""Statements a text makes about the business, found by rules: a service's price or duration, a
day being open or closed, a day's opening or closing time, a service (not) being offered.

Shared by `contradicts_manifest` (statements vs the manifest) and `self_contradiction`
(statements vs earlier statements). Every statement keeps its sentence and a span, so checks
quote the text literally. Recognition is deliberately conservative: a value is tied to a service
or day only when the clause says so; anything ambiguous yields no statement rather than a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache

from generator.domain import parse_days
from generator.schemas import Manifest, ManifestHours
from judge.facts import Fact, extract_facts, time_variants
from judge.text import DAY_WORD, Sentence, split_sentences, words

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# --------------------------------------------------------------------------- segments

# A clause boundary inside a sentence. "and"/"or" between two times do not split ("between 9:00
# and 13:00"); " - " does not split either ("8:30 - 18:00").
_SEGMENT_BREAK = re.compile(
    r"[,;]\s+|:\s+|\s+(?:but|while|whilst|whereas|so|plus)\s+"
    r"|\s+(?:and|or)\s+(?!\d)|(?<![\d.m])\s+(?:and|or)\s+(?=\d)"
    r"|\s*[|•·()\[\]]\s*|\s+[–—]\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Segment:
    start: int
    end: int
    text: str


def segments(text: str, sentence: Sentence) -> list[Segment]:
    """The clauses of `sentence` (positions are in `text`)."""
    out: list[Segment] = []
    pos = sentence.start
    for match in _SEGMENT_BREAK.finditer(sentence.text):
        _add_segment(text, pos, sentence.start + match.start(), out)
        pos = sentence.start + match.end()
    _add_segment(text, pos, sentence.end, out)
    return out


def _add_segment(text: str, start: int, end: int, out: list[Segment]) -> None:
    raw = text[start:end]
    stripped = raw.strip()
    if stripped:
        offset = start + len(raw) - len(raw.lstrip())
        out.append(Segment(offset, offset + len(stripped), stripped))


def _facts_in(facts: list[Fact], start: int, end: int, kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind and start <= f.start < end]


# --------------------------------------------------------------------------- services

_SYNONYMS = {
    "children": "child",
    "childrens": "child",
    "kids": "child",
    "kid": "child",
    "hygienist": "hygiene",
    "examination": "exam",
}
_STOP = frozenset(words("a an and or the of for with to in on at per one your our my by from"))
# Name words too common to identify a service on their own ("book an appointment", "a tooth").
_WEAK = frozenset(
    words(
        "appointment treatment session visit service consultation tooth teeth fit standard basic "
        "full adult new surface under plus care"
    )
)
_TOKEN = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """Light stemming for name matching: 'cleaning' -> 'clean', 'fillings' -> 'fill'."""
    w = word.casefold().replace("'", "").replace("’", "")
    w = _SYNONYMS.get(w, w)
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    return _SYNONYMS.get(w, w)


@dataclass(frozen=True)
class ServiceNames:
    """Name stems of the manifest's services; a mention needs one non-generic stem."""

    stems: dict[str, frozenset[str]]  # service name -> its name stems

    @property
    def vocabulary(self) -> frozenset[str]:
        return frozenset(s for stems in self.stems.values() for s in stems)


@cache
def service_names(names: tuple[str, ...]) -> ServiceNames:
    stems: dict[str, frozenset[str]] = {}
    for name in names:
        # "Check-up" and "check up" are one word for matching: "checkup".
        compounds = re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", name.casefold())
        stems[name] = frozenset(stem(c.replace("-", "")) for c in compounds) - _STOP
    return ServiceNames(stems)


def names_of(manifest: Manifest) -> ServiceNames:
    return service_names(tuple(s.name for s in manifest.services))


@dataclass(frozen=True)
class Mention:
    """A service named in text; `services` holds every manifest service the words may mean."""

    start: int
    end: int
    services: frozenset[str]


def _tokens(text: str, vocabulary: frozenset[str]) -> list[tuple[str, int, int]]:
    """(stem, start, end) per word; two words that form a name compound are merged."""
    raw = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text.casefold())]
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(raw):
        word, start, end = raw[i]
        if i + 1 < len(raw):
            nxt, nstart, nend = raw[i + 1]
            gap = text[end:nstart]
            joined = stem(word + nxt)
            if gap in ("", "-", " ") and joined in vocabulary and stem(word) not in vocabulary:
                out.append((joined, start, nend))
                i += 2
                continue
        out.append((stem(word), start, end))
        i += 1
    return out


def service_mentions(text: str, names: ServiceNames) -> list[Mention]:
    """Runs of adjacent service-name words with a distinctive one, resolved to the services
    that share the most words with the run ("child check-up" -> Child check-up only)."""
    vocabulary = names.vocabulary
    mentions: list[Mention] = []
    run: list[tuple[str, int, int]] = []

    def close() -> None:
        said = {s for s, _, _ in run}
        scores = {
            name: len(said & stems) for name, stems in names.stems.items() if said & (stems - _WEAK)
        }
        if scores:
            best = max(scores.values())
            chosen = frozenset(n for n, score in scores.items() if score == best)
            mentions.append(Mention(run[0][1], run[-1][2], chosen))
        run.clear()

    for token in _tokens(text, vocabulary):
        word, start, _ = token
        adjacent = bool(run) and re.fullmatch(r"[\s/-]*", text[run[-1][2] : start])
        if word in vocabulary and word not in _STOP:
            if run and not adjacent:
                close()
            run.append(token)
        elif run:
            close()
    if run:
        close()
    return mentions


def _resolve(mentions: list[Mention]) -> frozenset[str]:
    """One segment's services: the common reading of its mentions, else every reading."""
    if not mentions:
        return frozenset()
    common = frozenset.intersection(*(m.services for m in mentions))
    return common or frozenset().union(*(m.services for m in mentions))


# Words saying a money amount or a duration is about something other than the service itself.
_OTHER_MONEY = re.compile(
    r"\b(?:cancel\w*|late|missed|miss|no[- ]shows?|notice|deposits?|refund\w*|insur\w*|receipts?"
    r"|x-?rays?|crowns?|root canal|extractions?|larger|additional|extra|total|together|combined"
    r"|altogether|both|in all|comes? to|discount\w*|off|save|saving|vouchers?|coupons?|from"
    r"|starting|up to|under|over|less than|more than|per|each|was|were|previously|used to"
    r"|instead of|above|below|beyond|exceed\w*|estimat\w*|threshold|limit\w*|minimum|maximum"
    r"|approv\w*)\b|%",
    re.IGNORECASE,
)
_OTHER_DURATION = re.compile(
    r"\b(?:notice|within|respon\w*|repl\w*|wait\w*|working|before|after|ago|every|recover\w*"
    r"|numb\w*|avoid|eat\w*|drink\w*|brush\w*|early|earlier|late|later|arrive|prior|advance"
    r"|apart|interval|walk|drive|away|park\w*|break|lunch|up to|under|over|less than|more than"
    r"|max\w*|at least|at most|each|per|call back|total|together|combined|both|months?|weeks?"
    r"|days?|years?)\b",
    re.IGNORECASE,
)
_APPROX = re.compile(
    r"\b(?:about|around|approx\w*|roughly|circa|ca\.?|or so|give or take|usually|typically)\s*$",
    re.IGNORECASE,
)
_FOR_NEXT = re.compile(
    r"^\s*(?:\w+\s+)?(?:for|on|of)\s+(?:(?:a|an|the|your|one|our)\s+)?$", re.IGNORECASE
)
# "It costs 80 EUR." right after a sentence that named exactly one service.
_CARRY = re.compile(
    r"^\W*(?:it|that|this|it's|that's|this is|which|the (?:price|cost|fee|session|appointment"
    r"|treatment|visit)|price|cost|duration)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ServiceClaim:
    """A price (amount in the reply's currency) or a duration (minutes) of a service."""

    kind: str  # "price" | "duration"
    services: frozenset[str]
    amount: Decimal
    approximate: bool
    start: int
    end: int
    sentence: Sentence
    derived: bool = False

    @property
    def service(self) -> str | None:
        """The service when the text names exactly one."""
        return next(iter(self.services)) if len(self.services) == 1 else None


def _amount(fact: Fact) -> Decimal | None:
    try:
        return Decimal(fact.value.split()[0])
    except InvalidOperation:
        return None


def _nearest(mentions: list[Mention]) -> frozenset[str]:
    """The services of the last mention, narrowed by one just before it ("check-up & exam")."""
    services = mentions[-1].services
    if len(mentions) > 1 and mentions[-1].start - mentions[-2].end <= 5:
        return (services & mentions[-2].services) or services
    return services


def _attribute(
    text: str, fact: Fact, mentions: list[Mention], inherited: Mention | None
) -> Mention | None:
    """The mention a value in a clause belongs to: "80 EUR for a clean" looks ahead; otherwise
    the nearest service named before it, then the previous clause's, then the next one named."""
    before = [m for m in mentions if m.end <= fact.start]
    after = [m for m in mentions if m.start >= fact.end]
    if after and _FOR_NEXT.match(text[fact.end : after[0].start]):
        return after[0]
    if before:
        return Mention(before[-1].start, before[-1].end, _nearest(before))
    if inherited:
        return inherited
    return after[0] if after else None


def service_claims(text: str, manifest: Manifest) -> list[ServiceClaim]:
    """Every price or duration the text ties to a manifest service (clause by clause; a clause
    without a service name inherits the previous clause's, unless it speaks of fees, notice...)."""
    names = names_of(manifest)
    facts = extract_facts(text, default_currency=manifest.currency)
    claims: list[ServiceClaim] = []
    carried: frozenset[str] = frozenset()
    for sentence in split_sentences(text):
        sentence_mentions = service_mentions(sentence.text, names)
        last: Mention | None = None
        if carried and not sentence_mentions and _CARRY.match(sentence.text):
            last = Mention(sentence.start, sentence.start, carried)
        for segment in segments(text, sentence):
            mentions = [
                Mention(segment.start + m.start, segment.start + m.end, m.services)
                for m in service_mentions(segment.text, names)
            ]
            for kind, fact_kind, other in (
                ("price", "money", _OTHER_MONEY),
                ("duration", "duration", _OTHER_DURATION),
            ):
                for fact in _facts_in(facts, segment.start, segment.end, fact_kind):
                    mention = _attribute(text, fact, mentions, last)
                    amount = _amount(fact)
                    if mention is None or amount is None:
                        continue
                    # Words between the service and the value (and the rest of the clause)
                    # may say the value is about something else: "cancel ... a fee of 30 EUR".
                    context = text[min(mention.start, segment.start) : segment.end]
                    if other.search(context):
                        continue
                    before = text[max(segment.start, fact.start - 25) : fact.start]
                    claims.append(
                        ServiceClaim(
                            kind,
                            mention.services,
                            amount,
                            bool(_APPROX.search(before)),
                            fact.start,
                            fact.end,
                            sentence,
                        )
                    )
            if mentions:
                last = Mention(mentions[-1].start, mentions[-1].end, _nearest(mentions))
        groups = {m.services for m in sentence_mentions}
        carried = next(iter(groups)) if len(groups) == 1 else frozenset()
    return claims


def duration_matches(claimed: Decimal, truth: int, approximate: bool) -> bool:
    """Exact minutes, or within max(10 min, 25%) when the text says 'about'."""
    if not approximate:
        return claimed == truth
    return abs(claimed - truth) <= max(Decimal(10), Decimal(truth) / 4)


# --------------------------------------------------------------------------- days and hours

_DAY_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|through|thru|until|till)\s*$", re.IGNORECASE)
_DAY_GROUPS = (
    (re.compile(r"\bweekdays?\b", re.IGNORECASE), frozenset(range(5))),
    (re.compile(r"\bweekends?\b", re.IGNORECASE), frozenset({5, 6})),
    (
        re.compile(
            r"\b(?:every ?day|daily|(?:7|seven) days(?: a week)?|all week)\b|\b24/7\b",
            re.IGNORECASE,
        ),
        frozenset(range(7)),
    ),
)
# Lower-case abbreviations that are ordinary words ("sat down", "the sun") count only in ranges.
_AMBIGUOUS_ABBR = frozenset({"sat", "sun", "wed"})
_LISTED_BEFORE = re.compile(r"(?:^|[,;|/])\s*$")
_LISTED_AFTER = re.compile(r"\s*(?::|-|–|\d|closed\b|open\b)", re.IGNORECASE)


@dataclass(frozen=True)
class DayMention:
    start: int
    end: int
    days: frozenset[int]


def day_number(word: str) -> int:
    return [d[:3].casefold() for d in WEEKDAYS].index(word[:3].casefold())


def day_mentions(text: str) -> list[DayMention]:
    """Weekdays named in text: single days, ranges ('Mon-Thu', 'Monday to Friday') and groups
    ('weekdays', 'every day', '24/7')."""
    named = list(DAY_WORD.finditer(text))
    out: list[DayMention] = []
    used: set[int] = set()
    for i, match in enumerate(named):
        if i in used:
            continue
        nxt = named[i + 1] if i + 1 < len(named) else None
        if nxt and _DAY_RANGE_JOIN.match(text[match.end() : nxt.start()]):
            first, last = day_number(match.group(0)), day_number(nxt.group(0))
            days = frozenset((first + k) % 7 for k in range((last - first) % 7 + 1))
            out.append(DayMention(match.start(), nxt.end(), days))
            used.add(i + 1)
            continue
        abbr = match.group("abbr")
        if (
            abbr in _AMBIGUOUS_ABBR
            and not _LISTED_BEFORE.search(text[: match.start()])
            and not _LISTED_AFTER.match(text[match.end() :])
        ):
            continue  # lower-case "sat"/"sun"/"wed" in prose is not a day
        out.append(DayMention(match.start(), match.end(), frozenset({day_number(match.group(0))})))
    for pattern, days in _DAY_GROUPS:
        for match in pattern.finditer(text):
            out.append(DayMention(match.start(), match.end(), days))
    return sorted(out, key=lambda m: m.start)


_CLOSED_CUE = re.compile(
    r"\bclosed\b(?!\s+(?:from|after|between|for lunch|until|till)|\s+at\s+\d)"
    r"|\bshut\b(?!\s+at\s+\d)"
    r"|\b(?:not|never|n't|no longer)\s+open\b|\b(?:don't|dont|do not|does not|doesn't)\s+"
    r"(?:open|work|operate)\b|\boutside (?:of )?(?:our |the )?(?:opening |business )?hours\b"
    r"|\bno (?:opening|surgery|clinic)\b|\bday off\b",
    re.IGNORECASE,
)
_OPEN_CUE = re.compile(
    r"\bopens?\b|\b(?:opening|business|surgery|clinic|our) hours\b", re.IGNORECASE
)
# A time in the same clause as one of these is a booking or a break, not opening hours.
_NOT_HOURS = re.compile(
    r"\b(?:appointments?|slots?|book\w*|request\w*|reserv\w*|see you|pencil\w*|noted|arriv\w*"
    r"|come in|available|availability|free|works?|suits?|lunch|break|visit|last|earliest"
    r"|latest|call(?:ed)? back|answered|reply|replies)\b",
    re.IGNORECASE,
)
_TIME_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|until|till|til|through|and)\s*$", re.IGNORECASE)
_CLOSES_BEFORE = re.compile(
    r"(?:until|till|til|to|clos\w*|shut\w*|finish\w*|end\w*)\s*(?:at\s*)?(?:around\s*|about\s*)?$",
    re.IGNORECASE,
)
_OPENS_BEFORE = re.compile(
    r"(?:from|open\w*|start\w*)\s*(?:at\s*|from\s*)?(?:around\s*|about\s*)?$", re.IGNORECASE
)


@dataclass(frozen=True)
class DayClaim:
    """'open'/'closed' on a day, or the day's opening ('opens') / closing ('closes') time.

    `times` holds every reading of a time written without am/pm ("6:00" -> 06:00 and 18:00)."""

    kind: str  # "open" | "opens" | "closes"
    day: int
    is_open: bool
    times: frozenset[str]
    start: int
    end: int
    sentence: Sentence
    derived: bool = False


def _polarity(segment: Segment, mention_start: int | None) -> bool | None:
    """Open (True) / closed (False) said in the clause; the cue nearest the day wins a tie."""
    closed = list(_CLOSED_CUE.finditer(segment.text))
    closed_spans = [(m.start(), m.end()) for m in closed]
    opened = [
        m
        for m in _OPEN_CUE.finditer(segment.text)
        if not any(s <= m.start() < e for s, e in closed_spans)
    ]
    if closed and not opened:
        return False
    if opened and not closed:
        return True
    if not closed or mention_start is None:
        return None
    where = mention_start - segment.start
    nearest_closed = min(abs(m.start() - where) for m in closed)
    nearest_open = min(abs(m.start() - where) for m in opened)
    return nearest_open < nearest_closed


def day_claims(text: str, *, include_questions: bool = False) -> list[DayClaim]:
    """Open/closed days and opening/closing times the text states, clause by clause; a clause
    naming only days ("Monday and") passes them on to the next clause."""
    facts = extract_facts(text)
    claims: list[DayClaim] = []
    for sentence in split_sentences(text):
        if "?" in sentence.text and not include_questions:
            continue  # a question states nothing
        pending: set[int] = set()
        last: frozenset[int] = frozenset()
        for segment in segments(text, sentence):
            mentions = day_mentions(segment.text)  # positions relative to the segment
            here = frozenset().union(*(m.days for m in mentions)) if mentions else frozenset()
            times = _facts_in(facts, segment.start, segment.end, "time")
            polarity = _polarity(segment, segment.start + mentions[0].start if mentions else None)
            if here and polarity is None and not times:
                pending |= here
                continue
            if here:
                effective = here | pending
            elif pending:
                effective = frozenset(pending)
            else:
                effective = last
            pending = set()
            last = effective
            if not effective:
                continue
            spans = _hours(text, segment, times)
            if polarity is None and any(kind == "opens" for kind, _, _ in spans):
                polarity = True  # "Sat 9:00-13:00": a day with hours is an open day
            for day in sorted(effective):
                if polarity is not None:
                    claims.append(
                        DayClaim(
                            "open",
                            day,
                            polarity,
                            frozenset(),
                            segment.start,
                            segment.end,
                            sentence,
                        )
                    )
                for kind, fact, _ in spans:
                    claims.append(
                        DayClaim(
                            kind,
                            day,
                            True,
                            frozenset(time_variants(fact)),
                            segment.start,
                            segment.end,
                            sentence,
                        )
                    )
    return claims


def _hours(text: str, segment: Segment, times: list[Fact]) -> list[tuple[str, Fact, int]]:
    """('opens'|'closes', time fact, position) stated in a clause: a range, or a single time
    introduced by 'from'/'until'. None when the clause is about a booking or a break."""
    if not times or _NOT_HOURS.search(segment.text):
        return []
    out: list[tuple[str, Fact, int]] = []
    i = 0
    while i < len(times):
        fact = times[i]
        nxt = times[i + 1] if i + 1 < len(times) else None
        if nxt and _TIME_RANGE_JOIN.match(text[fact.end : nxt.start]):
            out += [("opens", fact, fact.start), ("closes", nxt, nxt.start)]
            i += 2
            continue
        before = text[max(segment.start, fact.start - 30) : fact.start]
        if _CLOSES_BEFORE.search(before):
            out.append(("closes", fact, fact.start))
        elif _OPENS_BEFORE.search(before):
            out.append(("opens", fact, fact.start))
        i += 1
    return out


def manifest_days(manifest: Manifest) -> dict[int, ManifestHours]:
    """Weekday -> the manifest hours line that covers it (the first, if several do)."""
    out: dict[int, ManifestHours] = {}
    for line in manifest.hours:
        for day in sorted(parse_days(line.days)):
            out.setdefault(day, line)
    return out


def day_label(days: list[int]) -> str:
    """[0, 1, 2] -> 'Monday-Wednesday'; [5] -> 'Saturday'; [0, 4] -> 'Monday, Friday'."""
    days = sorted(set(days))
    if not days:
        return ""
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return f"{WEEKDAYS[days[0]]}-{WEEKDAYS[days[-1]]}"
    return ", ".join(WEEKDAYS[d] for d in days)


# --------------------------------------------------------------------------- offered services

_NEGATION = r"do not|don't|dont|does not|doesn't|no longer|never|cannot|can't|can not|won't"
_OFFER = re.compile(
    r"\b(?:we|the practice|the clinic|our (?:practice|clinic|team|dentists?))\s+"
    r"(?:(?:currently|also|only|really|actually|still|unfortunately)\s+)?"
    rf"(?:(?P<neg>{_NEGATION})\s+)?"
    r"(?:(?:currently|also|only|really|actually|still)\s+)?(?:do\s+)?"
    r"(?P<verb>offer|provide|perform|sell|do|accept|bill|take)(?:s|es)?\b"
    r"(?P<obj>[^.,;:!?()]{2,80})",
    re.IGNORECASE,
)
_OFFER_PASSIVE = re.compile(
    r"(?P<obj>\b[\w' -]{3,50}?)\s+(?:is|are)(?P<neg>n't|\s+not)?\s+(?:\w+\s+)?"
    r"(?:offered|provided|available)\b(?P<tail>[^.,;:!?]{0,40})",
    re.IGNORECASE,
)
_OFFER_QUESTION = re.compile(
    r"\b(?:do|does|can)\s+(?:you|u|the practice|the clinic)\s+(?:also\s+)?"
    r"(?P<verb>offer|provide|perform|sell|do|accept|bill|take)\b(?P<obj>[^.,;:!?()]{2,80})",
    re.IGNORECASE,
)
# An offer said under a condition is not a yes/no position on the service.
_CONDITION = re.compile(
    r"\b(?:without|unless|until|before|after|if|except|only|under|over|today|tomorrow|tonight"
    r"|this week|next week|at the moment|right now|on (?:a |the )?(?:mon|tue|wed|thu|fri|sat|sun)"
    r"\w*|weekends?|for (?:children|kids|adults)|to (?:patients|children|adults|people))\b",
    re.IGNORECASE,
)
_OBJECT_END = re.compile(
    r"\b(?:but|so|as|because|since|which|who|that|if|unless|when|where|here|at the)\b",
    re.IGNORECASE,
)
_HEARSAY = re.compile(
    r"\b(?:confirm|sure|whether|if|check|ask|know|say|tell you)\s+(?:that\s+)?$", re.IGNORECASE
)
_FILLER = frozenset(
    words(
        "any the a an it that this them those these also here our your practice clinic currently "
        "yes we you for of to in with on and or but some all such service services treatment "
        "treatments sorry unfortunately really only just still any kind type please"
    )
)


@dataclass(frozen=True)
class OfferClaim:
    """'We (do not) offer X': X is a manifest service or, for other things, a bag of words."""

    offered: bool
    service: str | None
    words: frozenset[str]
    start: int
    end: int
    sentence: Sentence
    derived: bool = False

    @property
    def subject(self) -> str:
        return self.service or " ".join(sorted(self.words))


def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (three letters or more, no filler)."""
    return (
        frozenset(stem(w) for w in re.findall(r"[a-z][a-z']+", text.casefold()) if len(w) >= 3)
        - _FILLER
        - _STOP
    )


def _offer_object(raw: str) -> str | None:
    """The object phrase of an offer, or None when it is conditional."""
    if _CONDITION.search(raw):
        return None
    cut = _OBJECT_END.search(raw)
    return raw[: cut.start()] if cut else raw


def offer_claims(
    text: str, manifest: Manifest, *, include_questions: bool = False
) -> list[OfferClaim]:
    """'We offer whitening' / 'we don't do braces' / 'whitening is not offered' statements."""
    names = names_of(manifest)
    claims: list[OfferClaim] = []
    for sentence in split_sentences(text):
        if "?" in sentence.text and not include_questions:
            continue
        found: list[tuple[re.Match[str], bool, str]] = []
        pattern = _OFFER_QUESTION if include_questions else _OFFER
        for m in pattern.finditer(sentence.text):
            if _HEARSAY.search(sentence.text[max(0, m.start() - 25) : m.start()]):
                continue  # "I can't confirm that we offer it" states nothing
            neg = bool(m.groupdict().get("neg"))
            obj = _offer_object(m.group("obj"))
            if obj is not None:
                found.append((m, not neg, obj))
        if not include_questions:
            for m in _OFFER_PASSIVE.finditer(sentence.text):
                if _CONDITION.search(m.group("tail")) or _CONDITION.search(m.group("obj")):
                    continue
                found.append((m, not m.group("neg"), m.group("obj")))
        for match, offered, obj in found:
            mentions = service_mentions(obj, names)
            services = _resolve(mentions)
            service = next(iter(services)) if len(services) == 1 else None
            if service is None and match.re is _OFFER_PASSIVE:
                continue  # "Saturday at 10:00 is available" is a slot, not an offer
            words = content_stems(obj)
            if service is None and not words:
                continue
            start, end = sentence.start + match.start(), sentence.start + match.end()
            claims.append(OfferClaim(offered, service, words, start, end, sentence))
    return claims


# --------------------------------------------------------------------------- yes / no answers

_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|absolutely|correct|that's right|that is right|indeed)\b",
    re.IGNORECASE,
)
_NO = re.compile(
    r"^\W*(?:no|nope|sorry,? no|i'?m afraid not|unfortunately,? not|not really)\b"
    r"(?!\s+(?:problem|worries|bother|need|rush|matter))",
    re.IGNORECASE,
)


# "Is that right?" / "is it true?": a short question about what the customer just said.
_ANAPHORIC = re.compile(r"^(?=(?:\W*\w+){1,6}\W*$).*\b(?:that|this|it)\b", re.IGNORECASE)


def answer_polarity(reply: str) -> bool | None:
    """A reply that opens with a plain yes (True) or no (False); None otherwise."""
    head = reply.strip()[:40]
    if _YES.match(head):
        return True
    if _NO.match(head):
        return False
    return None


def the_question(customer: str) -> str | None:
    """The customer's single question sentence, or None if they asked none or several."""
    questions = [s.text for s in split_sentences(customer) if "?" in s.text]
    return questions[0] if len(questions) == 1 else None


def first_sentence(reply: str) -> Sentence | None:
    sentences = split_sentences(reply)
    return sentences[0] if sentences else None


@dataclass(frozen=True)
class Statements:
    """What one reply states; a claim's `derived` flag marks a bare yes/no to a question."""

    services: list[ServiceClaim]
    days: list[DayClaim]
    offers: list[OfferClaim]


def reply_statements(customer: str, reply: str, manifest: Manifest) -> Statements:
    """The reply's own statements, plus those a bare "Yes"/"No" makes of the customer's one
    question ("Are you open on Sunday?" - "Yes!" states open on Sunday), quoted by the reply's
    first sentence. Derived statements never override what the reply says itself."""
    services = service_claims(reply, manifest)
    days = day_claims(reply)
    offers = offer_claims(reply, manifest)
    polarity = answer_polarity(reply)
    question = the_question(customer)
    head = first_sentence(reply)
    if polarity is None or question is None or head is None:
        return Statements(services, days, offers)
    said_days = {c.day for c in days if c.kind == "open"}
    # "My friend said it's 50 euro. Is that right?": the question leans on the sentence before.
    context = customer if _ANAPHORIC.match(question) else question
    asked_days = day_claims(question, include_questions=True) or day_claims(
        context, include_questions=True
    )
    for day in asked_days:
        if day.kind == "open" and day.day not in said_days:
            is_open = day.is_open if polarity else not day.is_open
            days.append(
                DayClaim("open", day.day, is_open, frozenset(), head.start, head.end, head, True)
            )
    if polarity:
        said_services = {(c.kind, c.services) for c in services}
        asked = service_claims(question, manifest) or service_claims(context, manifest)
        for service in asked:
            if service.service and (service.kind, service.services) not in said_services:
                services.append(
                    ServiceClaim(
                        service.kind,
                        service.services,
                        service.amount,
                        service.approximate,
                        head.start,
                        head.end,
                        head,
                        True,
                    )
                )
    said_offers = {c.subject for c in offers}
    for offer in offer_claims(question, manifest, include_questions=True):
        if offer.subject not in said_offers:
            offers.append(
                OfferClaim(
                    offer.offered == polarity,
                    offer.service,
                    offer.words,
                    head.start,
                    head.end,
                    head,
                    True,
                )
            )
    return Statements(services, days, offers)
