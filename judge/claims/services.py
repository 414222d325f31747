"""Services named in text (resolved against the manifest's service names) and the prices
and durations a text ties to them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache, cached_property, lru_cache

from generator.schemas import Manifest
from judge.claims.segments import FactSpans, facts_in, segments
from judge.facts import Fact, extract_facts
from judge.text import Sentence, split_sentences, words

_SYNONYMS = {
    "children": "child",
    "childrens": "child",
    "kids": "child",
    "kid": "child",
    "hygienist": "hygiene",
    "examination": "exam",
}
# Function words: never part of a service name.
STOP = frozenset(words("a an and or the of for with to in on at per one your our my by from"))
# Name words too common to identify a service on their own ("book an appointment", "a tooth").
_WEAK = frozenset(
    words(
        "appointment treatment session visit service consultation tooth teeth fit standard basic "
        "full adult new surface under plus care"
    )
)
_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=65536)  # a KB repeats its words: each is stemmed once
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

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        return frozenset(s for stems in self.stems.values() for s in stems)


@cache
def service_names(names: tuple[str, ...]) -> ServiceNames:
    stems: dict[str, frozenset[str]] = {}
    for name in names:
        # "Check-up" and "check up" are one word for matching: "checkup".
        compounds = re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", name.casefold())
        stems[name] = frozenset(stem(c.replace("-", "")) for c in compounds) - STOP
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
        if word in vocabulary and word not in STOP:
            if run and not adjacent:
                close()
            run.append(token)
        elif run:
            close()
    if run:
        close()
    return mentions


def resolve_mentions(mentions: list[Mention]) -> frozenset[str]:
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
    r"|approv\w*|annul\w*|absag\w*|storn\w*|ab|à partir|dès|desde|vanaf|från|acompte|anzahlung)"
    r"\b|%",
    re.IGNORECASE,
)
_OTHER_DURATION = re.compile(
    r"\b(?:notice|within|respon\w*|repl\w*|wait\w*|working|before|after|ago|every|recover\w*"
    r"|numb\w*|avoid|eat\w*|drink\w*|brush\w*|early|earlier|late|later|arrive|prior|advance"
    r"|apart|interval|walk|drive|away|park\w*|break|lunch|up to|under|over|less than|more than"
    r"|max\w*|at least|at most|each|per|call back|total|together|combined|both|months?|weeks?"
    r"|days?|years?|avant|après|annul\w*|vorher|absag\w*|storn\w*|innerhalb|antes|despu[eé]s)\b",
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
    facts = FactSpans.of(extract_facts(text, default_currency=manifest.currency))
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
                for fact in facts_in(facts, segment.start, segment.end, fact_kind):
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


# 'About 45 minutes' holds within the larger of ABOUT_MINUTES and ABOUT_SHARE of the truth.
ABOUT_MINUTES = 10
ABOUT_SHARE = Decimal("0.25")


def duration_matches(claimed: Decimal, truth: int, approximate: bool) -> bool:
    """Exact minutes, or within max(ABOUT_MINUTES, ABOUT_SHARE) when the text says 'about'."""
    if not approximate:
        return claimed == truth
    return abs(claimed - truth) <= max(Decimal(ABOUT_MINUTES), Decimal(truth) * ABOUT_SHARE)
