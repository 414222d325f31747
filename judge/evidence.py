"""The one evidence check of every layer (DESIGN §9): a finding's quotes and subject are verbatim.

Each evidence quote must be found in the text it cites: a reply or a customer message (of its
turn when it names one), the KB fixture, the manifest, the persona's facts or the extracted
fields. Its `subject` must be found in one of its quotes or in the text one of them cites. Both
are compared after `normalize` (Unicode NFKC, zero-width characters removed, typographic quotes
and dashes made plain, case and runs of whitespace folded, edge punctuation dropped); nothing
else is forgiven. Only the LLM judge's quotes may also match nearly (similarity >= 0.9): a model
copies text with small slips, a rule never does.

A finding that fails is dropped, never downgraded, and counted by rule: the counts go into the
case judgement and the run report.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable

from generator.schemas import Manifest
from judge.normalize import INVISIBLE_RE
from judge.schemas import CaseTranscript, Evidence, Finding

FUZZY_MIN = 0.9
# Evidence of these sources cites no text the judge holds (a pipeline error message).
_UNCHECKED = frozenset({"error"})
_PLAIN = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc\u0060\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        "\u00a0": " ",
    }
)
_SPACE = re.compile(r"\s+")
_EDGES = " .,!?;:\"'"


def normalize(text: str) -> str:
    """The form quotes are compared in: NFKC, no invisible characters (the set
    `judge.normalize` removes before pattern checks), plain quotes and
    dashes, case-folded, whitespace runs as one space, no punctuation at either end."""
    text = unicodedata.normalize("NFKC", INVISIBLE_RE.sub("", text)).translate(_PLAIN)
    return _SPACE.sub(" ", text.casefold()).strip(_EDGES)


def quote_found(quote: str, text: str, *, fuzzy: bool = False) -> bool:
    """True when `quote` occurs in `text` once both are normalized; with `fuzzy`, also when a
    window of `text` as long as the quote is at least 90% similar to it."""
    return _found(normalize(quote), normalize(text), fuzzy=fuzzy)


def _found(q: str, t: str, *, fuzzy: bool) -> bool:
    if not q:
        return False
    if q in t:
        return True
    if not fuzzy or len(q) > len(t) + 5:
        return False
    size = len(q)
    step = max(1, size // 10)
    for start in range(0, max(1, len(t) - size + 1), step):
        window = t[start : start + size]
        if difflib.SequenceMatcher(None, q, window).ratio() >= FUZZY_MIN:
            return True
    return False


class Sources:
    """The texts a case's evidence may cite, normalized once each."""

    def __init__(self, case: CaseTranscript, manifest: Manifest | None) -> None:
        self._case = case
        self._manifest = manifest
        self._cache: dict[tuple[str, int | None], str] = {}

    def text(self, source: str, turn: int | None) -> str | None:
        """The normalized text `source` names (of `turn` when given); None when there is none
        (an unknown turn, a source the case does not hold)."""
        key = (source, turn)
        if key not in self._cache:
            raw = self._raw(source, turn)
            if raw is None:
                return None
            self._cache[key] = normalize(raw)
        return self._cache[key]

    def _raw(self, source: str, turn: int | None) -> str | None:
        turns = [t for t in self._case.turns if turn is None or t.index == turn]
        if source in ("reply", "customer", "extracted") and not turns:
            return None
        if source == "reply":
            return "\n".join(t.reply for t in turns)
        if source == "customer":
            return "\n".join(t.customer for t in turns)
        if source == "extracted":
            return "\n".join(v for t in turns for v in t.extracted.values())
        if source == "fixture":
            return self._case.fixture.text
        if source == "persona":
            persona = self._case.blueprint.persona
            return "\n".join([persona.name, *persona.facts.values()])
        if source == "manifest" and self._manifest is not None:
            return "\n".join(_strings(self._manifest.model_dump(mode="json")))
        return None


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def _fuzzy(finding: Finding) -> bool:
    return finding.detector == "llm"


def evidence_found(evidence: Evidence, sources: Sources, *, fuzzy: bool = False) -> bool:
    """The quote is in the text its evidence cites."""
    if evidence.source in _UNCHECKED:
        return True
    text = sources.text(evidence.source, evidence.turn)
    return text is not None and _found(normalize(evidence.quote), text, fuzzy=fuzzy)


def unverified(finding: Finding, sources: Sources) -> str | None:
    """Why `finding` fails the evidence check (a quote not in what it cites, or a subject in
    none of its quotes or their texts); None when it passes."""
    fuzzy = _fuzzy(finding)
    for evidence in finding.evidence:
        if not evidence_found(evidence, sources, fuzzy=fuzzy):
            return f"{evidence.source} quote not found: {evidence.quote[:80]!r}"
    subject = normalize(finding.subject)
    if not subject:
        return None
    for evidence in finding.evidence:
        if evidence.source in _UNCHECKED or _found(subject, normalize(evidence.quote), fuzzy=fuzzy):
            return None
        text = sources.text(evidence.source, evidence.turn)
        if text is not None and _found(subject, text, fuzzy=fuzzy):
            return None
    return f"subject not in its evidence: {finding.subject[:80]!r}"


def verify_findings(
    case: CaseTranscript,
    manifest: Manifest | None,
    findings: list[Finding],
    *,
    on_drop: Callable[[Finding, str], None] | None = None,
) -> tuple[list[Finding], dict[str, int]]:
    """The findings that pass the evidence check, and how many of each rule were dropped."""
    sources = Sources(case, manifest)
    kept: list[Finding] = []
    dropped: Counter[str] = Counter()
    for finding in findings:
        why = unverified(finding, sources)
        if why is None:
            kept.append(finding)
            continue
        dropped[finding.rule_id] += 1
        if on_drop is not None:
            on_drop(finding, why)
    return kept, dict(sorted(dropped.items()))
