"""Case and run scores from a transcript and its findings (formulas below, copied to
docs/judge-and-scoring.md).

Per case, each dimension is in [0, 1], or None when it does not apply:

- groundedness = 1 - U / F, where F = reply sentences that state a checkable fact (a money
  amount, time, duration, percentage, phone, email or URL) or that a groundedness finding
  (`unsupported_facts`, `contradicts_manifest`, `disallowed_claims`, `ungrounded_sentence`)
  cites, and U = the sentences among them that such a finding cites. 1.0 when F = 0 (nothing
  factual was said); None when the case has no reply.
- extraction_accuracy = C / S, where S = intake fields (manifest) whose persona value the
  customer actually stated in a message, and C = those whose last extracted value matches the
  persona value (case/space-insensitive; phones by digits; dates by day; times by HH:MM).
  None when S = 0 (the customer stated no intake field).
- conversation_quality = clamp(1 - 0.15 * minor - 0.30 * major - 0.50 * critical, 0, 1),
  counting findings of the conversation rules (`questions_per_turn`, `repeated_question`,
  `self_contradiction`, `final_status`, `judge_injection`, `ignored_question`,
  `irrelevant_reply`, `instruction_leak`, `partner_contradiction`, `kb_noise_echo`), as a
  finding's rule or a corroborating one (each finding counted once). None when the case has
  no turn.
- overall = weighted mean of the applicable dimensions with weights groundedness 0.40,
  extraction_accuracy 0.35, conversation_quality 0.25, renormalized over those that apply
  (0.0 when none applies). Example: g = 0.5, e = None, q = 0.7 ->
  (0.40 * 0.5 + 0.25 * 0.7) / (0.40 + 0.25) = 0.375 / 0.65 = 0.5769.
- passed = overall >= config.threshold (min_score_to_pass + strictness * 0.2) and no critical
  finding.

Per run: each dimension = mean over the cases where it applies (None if none);
overall = mean of the case overall scores (None when there is no case).
Scores are rounded to 4 decimals.
"""

from __future__ import annotations

from statistics import fmean

from generator.schemas import Manifest
from judge.checks.extraction_accuracy import assess_fields
from judge.facts import extract_facts
from judge.schemas import CaseJudgement, CaseScores, CaseTranscript, Finding, JudgeConfig, RunScores
from judge.text import split_sentences

GROUNDEDNESS_RULES = frozenset(
    {"unsupported_facts", "contradicts_manifest", "disallowed_claims", "ungrounded_sentence"}
)
CONVERSATION_RULES = frozenset(
    {
        "questions_per_turn",
        "repeated_question",
        "self_contradiction",
        "final_status",
        "judge_injection",
        "ignored_question",
        "irrelevant_reply",
        "instruction_leak",
        "partner_contradiction",
        "kb_noise_echo",
    }
)


def _counts_for(finding: Finding, rules: frozenset[str]) -> bool:
    """A merged finding counts for a dimension when its rule or a corroborating one belongs."""
    return finding.rule_id in rules or any(r in rules for r in finding.corroborating)


CONVERSATION_PENALTY = {"minor": 0.15, "major": 0.30, "critical": 0.50}
WEIGHTS = {"groundedness": 0.40, "extraction_accuracy": 0.35, "conversation_quality": 0.25}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def groundedness(case: CaseTranscript, findings: list[Finding], manifest: Manifest) -> float | None:
    """1 - unsupported factual sentences / factual sentences, over all replies."""
    replies = [t for t in case.turns if t.reply.strip()]
    if not replies:
        return None
    factual = unsupported = 0
    for turn in replies:
        quotes = [
            e.quote
            for f in findings
            if _counts_for(f, GROUNDEDNESS_RULES)
            for e in f.evidence
            if e.source == "reply" and e.turn == turn.index
        ]
        starts = [f.start for f in extract_facts(turn.reply, default_currency=manifest.currency)]
        for sentence in split_sentences(turn.reply):
            cited = any(q in sentence.text or sentence.text in q for q in quotes)
            has_fact = any(sentence.start <= s < sentence.end for s in starts)
            factual += cited or has_fact
            unsupported += cited
    return 1.0 if factual == 0 else 1 - unsupported / factual


def extraction_accuracy(case: CaseTranscript, manifest: Manifest) -> float | None:
    """Correctly extracted stated intake fields / stated intake fields."""
    stated = assess_fields(case, manifest)
    if not stated:
        return None
    return sum(field.correct for field in stated) / len(stated)


def conversation_quality(case: CaseTranscript, findings: list[Finding]) -> float | None:
    """1 - penalties of conversation findings, clamped to [0, 1]."""
    if not case.turns:
        return None
    penalty = sum(
        CONVERSATION_PENALTY[f.severity] for f in findings if _counts_for(f, CONVERSATION_RULES)
    )
    return min(1.0, max(0.0, 1.0 - penalty))


def weighted_overall(dimensions: dict[str, float | None]) -> float:
    """Weighted mean of the dimensions that apply, weights renormalized; 0.0 if none applies."""
    applicable = {k: v for k, v in dimensions.items() if v is not None}
    if not applicable:
        return 0.0
    total = sum(WEIGHTS[k] for k in applicable)
    return sum(WEIGHTS[k] * v for k, v in applicable.items()) / total


def case_scores(case: CaseTranscript, findings: list[Finding], manifest: Manifest) -> CaseScores:
    """The three dimensions and the overall score of one case."""
    dimensions = {
        "groundedness": _round(groundedness(case, findings, manifest)),
        "extraction_accuracy": _round(extraction_accuracy(case, manifest)),
        "conversation_quality": _round(conversation_quality(case, findings)),
    }
    return CaseScores(**dimensions, overall=round(weighted_overall(dimensions), 4))


def case_passed(scores: CaseScores, findings: list[Finding], config: JudgeConfig) -> bool:
    """overall >= threshold and no critical finding."""
    return scores.overall >= config.threshold and not any(
        f.severity == "critical" for f in findings
    )


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return _round(fmean(present)) if present else None


def run_scores(judgements: list[CaseJudgement]) -> RunScores:
    """Mean of each dimension over the cases where it applies; overall = mean of case overalls."""
    return RunScores(
        groundedness=_mean([j.scores.groundedness for j in judgements]),
        extraction_accuracy=_mean([j.scores.extraction_accuracy for j in judgements]),
        conversation_quality=_mean([j.scores.conversation_quality for j in judgements]),
        overall=_mean([j.scores.overall for j in judgements]),
    )
