"""'We (do not) offer X' statements: a service or thing offered or denied, unconditionally."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.schemas import Manifest
from judge.claims.services import STOP, names_of, resolve_mentions, service_mentions, stem
from judge.text import Sentence, split_sentences, words

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
        - STOP
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
            services = resolve_mentions(mentions)
            service = next(iter(services)) if len(services) == 1 else None
            if service is None and match.re is _OFFER_PASSIVE:
                continue  # "Saturday at 10:00 is available" is a slot, not an offer
            words = content_stems(obj)
            if service is None and not words:
                continue
            start, end = sentence.start + match.start(), sentence.start + match.end()
            claims.append(OfferClaim(offered, service, words, start, end, sentence))
    return claims
