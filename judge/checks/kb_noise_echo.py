"""Check: a reply repeats the KB's noise to the customer (a misspelling, markup debris).

Two sources of truth, in order:

1. Planted noise. A generated fixture records what the generator planted (`Fixture.noise`):
   a reply containing a planted misspelling (whole word, any case) echoes it, unless the customer
   typed that word too or it is also a correct word of the conversation's ground truth (the
   clean form of another planted typo, a word of the manifest).
2. Inferred noise, for a fixture without a record (a KB judged from a file, an older run):
   a reply word that occurs in the KB but is not a real word - one edit (insert, delete,
   substitute, transpose) from a common English word (`COMMON_WORDS`), a manifest word or a
   clearly more frequent word of the KB, reply and customer text - is a misspelling. Names
   (capitalised inside a KB sentence), all-caps codes, words with the edit on the first or last
   letter (plurals, -ed/-er), and British/American variants are never typos.

Markup debris is read from the KB itself in both cases: an HTML entity or tag, an unbalanced
`**`, a table rule or a row of table cells run into a sentence, a `#` heading or a bullet in the
middle of a line - in a reply, and spelled the same way (next to the same word) in the KB.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.kb_noise.debris import markup_spans, ocr_spans
from judge.kb_noise.typos import Lexicon, plain_words, word_spans
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig

PLANTED_CONFIDENCE = 0.9
MARKUP_CONFIDENCE = 0.8
INFERRED_TYPO_CONFIDENCE = 0.7
_MAX_CODE_LENGTH = 5
_MAX_QUOTES = 6


@dataclass(frozen=True)
class Span:
    """One noisy span of a reply: [start, end) and what it is."""

    start: int
    end: int
    text: str
    kind: str  # "typo" or a markup label
    clean: str  # the intended word for a typo; "" for markup
    confidence: float
    planted: bool


def _manifest_words(manifest: Manifest) -> frozenset[str]:
    texts = [manifest.org_name, *(s.name for s in manifest.services)]
    texts += [f.label for f in manifest.intake_fields] + [p.text for p in manifest.policies]
    texts += [h.days for h in manifest.hours] + [c.value for c in manifest.contacts]
    # The org's skill texts, where the manifest carries them (written by the org, not noised).
    texts += [str(getattr(i, "text", "")) for i in getattr(manifest, "instructions", [])]
    return frozenset(w for text in texts for w in plain_words(text))


def _overlaps(span: Span, taken: Iterable[Span]) -> bool:
    return any(span.start < t.end and t.start < span.end for t in taken)


Typo = tuple[str, float, bool]  # (the right spelling, confidence, planted?)


def _typo_finder(
    case: CaseTranscript, kb: str, truth: frozenset[str]
) -> Callable[[str], Typo | None]:
    """How to tell a misspelt reply word in this case: from the fixture's planted record when it
    has one, else by inference from the KB and the conversation."""
    if case.fixture.noise:
        planted = {p.text.casefold(): p for p in case.fixture.noise if p.kind == "typo"}
        # A planted form that is also the right spelling of another planted word, or a word of
        # the ground truth, may be used correctly in the reply.
        correct = {w for p in case.fixture.noise for w in plain_words(p.clean)} | truth

        def recorded(word: str) -> Typo | None:
            record = planted.get(word.casefold())
            if record is None or word.casefold() in correct:
                return None
            return record.clean, PLANTED_CONFIDENCE, True

        return recorded

    said = "\n".join(f"{t.customer}\n{t.reply}" for t in case.turns)
    lexicon = Lexicon.build(kb, said, truth)

    def inferred(word: str) -> Typo | None:
        if word.isupper() and len(word) <= _MAX_CODE_LENGTH:
            return None  # an acronym or code (VAT, ASAP, NCT), not a word
        correction = lexicon.correction(word.casefold())
        return None if correction is None else (correction, INFERRED_TYPO_CONFIDENCE, False)

    return inferred


class KbNoiseEcho(Check):
    """Guarantees: a reply that repeats the KB's noise to the customer - a misspelling the
    generator planted (whole word, any case; not one the customer typed, not the correct
    spelling of another planted word or a manifest word), or, for a fixture without a planted
    record, a KB word one edit from a real word of the common list, the manifest or the case's
    frequent words (never a name, code, plural, first/last-letter or British/American variant,
    or a word the customer typed); or markup debris the KB spells the same way (HTML entity or
    tag, unbalanced **, a table rule or table cells inside a line, an inline # or bullet) -
    yields one minor finding per reply turn, quoting every noisy span of that reply."""

    check_id = "kb_noise_echo"
    needs = frozenset({"kb"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        kb = case.fixture.text if any(d.text.strip() for d in case.fixture.documents) else ""
        if not kb:
            return []
        misspelling = _typo_finder(case, kb, _manifest_words(manifest))
        planted_marks = {p.text for p in case.fixture.noise if p.kind == "markup"}
        findings: list[Finding] = []
        customer_words: set[str] = set()
        for turn in case.turns:
            # What the customer wrote so far is theirs to have repeated back.
            customer_words |= set(plain_words(turn.customer))
            spans: list[Span] = []
            for start, end, token, label in markup_spans(turn.reply, kb):
                planted = token in planted_marks
                confidence = PLANTED_CONFIDENCE if planted else MARKUP_CONFIDENCE
                span = Span(start, end, turn.reply[start:end], label, "", confidence, planted)
                if not _overlaps(span, spans):
                    spans.append(span)
            for start, end, token, meant in ocr_spans(turn.reply, kb):
                span = Span(start, end, token, "typo", meant, INFERRED_TYPO_CONFIDENCE, False)
                if token.casefold() not in customer_words and not _overlaps(span, spans):
                    spans.append(span)
            for match in word_spans(turn.reply):
                if match.group(0).casefold() in customer_words:
                    continue
                typo = misspelling(match.group(0))
                if typo is not None:
                    clean, confidence, planted = typo
                    span = Span(
                        match.start(),
                        match.end(),
                        match.group(0),
                        "typo",
                        clean,
                        confidence,
                        planted,
                    )
                    if not _overlaps(span, spans):
                        spans.append(span)
            if spans:
                findings.append(self._finding(case, turn.index, sorted(spans, key=_start)))
        return findings

    def _finding(self, case: CaseTranscript, turn_index: int, spans: list[Span]) -> Finding:
        quotes = list(dict.fromkeys(s.text for s in spans))[:_MAX_QUOTES]
        first = spans[0]
        described = "; ".join(
            f"'{s.text}' ({_describe(s)})" for s in {s.text: s for s in spans}.values()
        )
        if first.kind == "typo":
            fix = f"Correct '{first.text}' to '{_cased(first.clean, first.text)}' in the KB"
        else:
            fix = f"Remove the '{first.text}' markup ({first.kind}) from the KB text"
        others = " and the other noisy spans quoted" if len(quotes) > 1 else ""
        return self.finding(
            case,
            severity="minor",
            turn_index=turn_index,
            subject=first.text,
            evidence=[Evidence(source="reply", quote=q, turn=turn_index) for q in quotes],
            rationale=(
                f"The reply repeats noise from the knowledge base to the customer: {described}. "
                "The customer did not write it; the responder copied it from the KB."
            ),
            fix_target="kb",
            fix_text=(
                f"{fix}{others} (search the KB for every copy), so the responder stops "
                "repeating it to customers."
            ),
            effort="S",
            confidence=max(s.confidence for s in spans),
        )


def _start(span: Span) -> int:
    return span.start


def _describe(span: Span) -> str:
    if span.kind != "typo":
        return span.kind
    source = "a typo the generator planted" if span.planted else "a likely misspelling"
    return f"{source} for '{_cased(span.clean, span.text)}'"


def _cased(word: str, like: str) -> str:
    """`word` in the case pattern of `like` (Colletc -> Collect, BOOING -> BOOKING)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word.casefold() if like.islower() else word
