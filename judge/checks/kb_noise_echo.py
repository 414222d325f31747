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

Who fixes it (issue 32): noise in the organization's own KB text (`generator.fixtures.
org_documents`: the org's `kb/` documents a generated fixture carries, or the whole KB judged
from a file) is the KB's to clean (`kb`). Noise the lab planted or wrote itself - a recorded
planted form, anything only in the lab's sheets and notes - is not in the org's KB, so the fix is
the bot's (`prompt`): not to repeat typos and debris, and to correct obvious misspellings when
quoting. With a planted record, a misspelling of the org's own documents that was not planted is
inferred as above and is the KB's. A noised fixture without a record cannot tell the org's words
from the lab's noise: its findings target the bot.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from generator.fixtures import org_documents
from generator.schemas import Fixture, Manifest
from judge.checks.base import Check, Rule
from judge.kb_noise.debris import markup_spans, ocr_spans
from judge.kb_noise.typos import Lexicon, may_be_typo, plain_words, word_spans
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from qalab.domain import FixTarget

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
    org: bool = False  # in the organization's own KB text (not the lab's noise)


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


def org_kb_text(fixture: Fixture) -> str:
    """The organization's own KB text in `fixture` ("" when it cannot be told: a noised fixture
    without a planted record)."""
    generated = bool(fixture.metrics or fixture.noise)
    if generated and fixture.noise_level != "clean" and not fixture.noise:
        return ""
    return "\n".join(d.text for d in org_documents(fixture))


def _typo_finder(
    case: CaseTranscript, kb: str, truth: frozenset[str], org_words: frozenset[str]
) -> Callable[[str], Typo | None]:
    """How to tell a misspelt reply word in this case: from the fixture's planted record when it
    has one (and, for a word of the org's own documents, by inference), else by inference from
    the KB and the conversation."""

    @functools.cache
    def lexicon() -> Lexicon:  # built on first use: most words are settled without it
        said = "\n".join(f"{t.customer}\n{t.reply}" for t in case.turns)
        return Lexicon.build(kb, said, truth)

    def inferred(word: str) -> Typo | None:
        if word.isupper() and len(word) <= _MAX_CODE_LENGTH:
            return None  # an acronym or code (VAT, ASAP, NCT), not a word
        correction = lexicon().correction(word.casefold())
        return None if correction is None else (correction, INFERRED_TYPO_CONFIDENCE, False)

    if not case.fixture.noise:
        return inferred
    planted = {p.text.casefold(): p for p in case.fixture.noise if p.kind == "typo"}
    # A planted form that is also the right spelling of another planted word, or a word of the
    # ground truth, may be used correctly in the reply.
    correct = {w for p in case.fixture.noise for w in plain_words(p.clean)} | truth

    def recorded(word: str) -> Typo | None:
        folded = word.casefold()
        if folded in correct:
            return None
        record = planted.get(folded)
        if record is not None:
            return record.clean, PLANTED_CONFIDENCE, True
        # The record says what the lab planted; the org's own documents may hold typos of
        # their own, which nothing planted.
        return inferred(word) if folded in org_words and may_be_typo(folded, truth) else None

    return recorded


class KbNoiseEcho(Check):
    """Guarantees: a reply that repeats the KB's noise to the customer - a misspelling the
    generator planted (whole word, any case; not one the customer typed, not the correct
    spelling of another planted word or a manifest word), or, for a fixture without a planted
    record, a KB word one edit from a real word of the common list, the manifest or the case's
    frequent words (never a name, code, plural, first/last-letter or British/American variant,
    or a word the customer typed); or markup debris the KB spells the same way (HTML entity or
    tag, unbalanced **, a table rule or table cells inside a line, an inline # or bullet) -
    yields one minor finding per reply turn, quoting every noisy span of that reply. With a
    planted record, a misspelling inferred in the org's own documents counts too. The fix
    targets the KB (`kb`) when a span is in the org's own KB text (`org_kb_text`), else the bot
    (`prompt`: the lab's noise is in no KB the org could fix)."""

    rule = Rule(
        "kb_noise_echo",
        "minor",
        "deterministic",
        "prompt",
        "A reply repeats the KB's own noise to the customer: a misspelling the fixture planted or "
        "that the KB evidently contains, or markup debris such as '&nbsp;', '<br>', '| --- |' or "
        "an unbalanced '**'. The bot's fix: stop repeating it, correct obvious misspellings when "
        "quoting.",
        action="Stop repeating KB typos and markup to customers",
        fix_target_when={
            "kb": "when the noise is in the org's own KB text (its kb/ documents, or a KB judged "
            "from a file)"
        },
    )
    needs = frozenset({"kb"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        kb = case.fixture.text if any(d.text.strip() for d in case.fixture.documents) else ""
        if not kb:
            return []
        org_text = org_kb_text(case.fixture)
        org_words = frozenset(plain_words(org_text))
        misspelling = _typo_finder(case, kb, _manifest_words(manifest), org_words)
        planted_marks = {p.text for p in case.fixture.noise if p.kind == "markup"}
        findings: list[Finding] = []
        customer_words: set[str] = set()
        for turn in case.turns:
            # What the customer wrote so far is theirs to have repeated back.
            customer_words |= set(plain_words(turn.customer))
            spans: list[Span] = []
            marks = markup_spans(turn.reply, kb)
            org_marks = {m[0] for m in markup_spans(turn.reply, org_text)} if marks else set()
            for start, end, token, label in marks:
                planted = token in planted_marks
                confidence = PLANTED_CONFIDENCE if planted else MARKUP_CONFIDENCE
                org = not planted and start in org_marks
                span = Span(start, end, turn.reply[start:end], label, "", confidence, planted, org)
                if not _overlaps(span, spans):
                    spans.append(span)
            garble = ocr_spans(turn.reply, kb)
            org_garble = {m[0] for m in ocr_spans(turn.reply, org_text)} if garble else set()
            for start, end, token, meant in garble:
                span = Span(
                    start,
                    end,
                    token,
                    "typo",
                    meant,
                    INFERRED_TYPO_CONFIDENCE,
                    False,
                    start in org_garble,
                )
                if token.casefold() not in customer_words and not _overlaps(span, spans):
                    spans.append(span)
            for match in word_spans(turn.reply):
                if match.group(0).casefold() in customer_words:
                    continue
                typo = misspelling(match.group(0))
                if typo is not None:
                    clean, confidence, planted = typo
                    org = not planted and match.group(0).casefold() in org_words
                    span = Span(
                        match.start(),
                        match.end(),
                        match.group(0),
                        "typo",
                        clean,
                        confidence,
                        planted,
                        org,
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
        owned = [s for s in spans if s.org]
        if owned:
            # The org's own KB has it: cleaning the KB removes it at the source.
            target: FixTarget = "kb"
            fix_text = _kb_fix(owned[0], others=len({s.text for s in owned}) > 1)
        else:
            # The lab's noise (planted, or in its own sheets and notes): the org's KB does not
            # have it, so only the bot can stop repeating it.
            target = "prompt"
            fix_text = _bot_fix(first)
        return self.finding(
            case,
            turn_index=turn_index,
            subject=first.text,
            evidence=[Evidence(source="reply", quote=q, turn=turn_index) for q in quotes],
            rationale=(
                f"The reply repeats noise from the knowledge base to the customer: {described}. "
                "The customer did not write it; the responder copied it from the KB."
            ),
            fix_target=target,
            fix_text=fix_text,
            effort="S",
            confidence=max(s.confidence for s in spans),
        )


def _start(span: Span) -> int:
    return span.start


def _kb_fix(span: Span, *, others: bool) -> str:
    if span.kind == "typo":
        fix = f"Correct '{span.text}' to '{_cased(span.clean, span.text)}' in the KB"
    else:
        fix = f"Remove the '{span.text}' markup ({span.kind}) from the KB text"
    more = " and the other noisy spans of the KB quoted" if others else ""
    return f"{fix}{more} (search the KB for every copy), so the responder stops repeating it."


def _bot_fix(span: Span) -> str:
    if span.kind == "typo":
        example = f"'{span.text}' -> '{_cased(span.clean, span.text)}'"
    else:
        example = f"leave out '{span.text}'"
    return (
        "Tell the assistant not to repeat typos and formatting debris from its knowledge base: "
        f"correct obvious misspellings and drop markup when quoting ({example}). The org's own "
        "KB does not contain it, so there is nothing to fix there."
    )


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
