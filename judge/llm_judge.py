"""The LLM judge: one conversation-level review per case, whose evidence is machine-verified.

The model sees the transcript, the KB excerpt and the ground truth fenced as untrusted text and
answers in a strict schema. Every finding must quote the reply it is about; a quote that is not
found in that reply (normalized, or fuzzy with similarity >= 0.9) drops the finding, and the
drop is counted as unsupported. LLM findings are never critical on their own: a critical one is
kept as major and marked unconfirmed until a second pass confirms it (DESIGN §9).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from pydantic import BaseModel, Field

from generator.schemas import Manifest
from judge.gate import fingerprint
from judge.schemas import CaseTranscript, Effort, Evidence, Finding, FixTarget, Severity
from qalab.llm import Engine
from qalab.llm.prompts import fence, load_prompt

PROMPT = load_prompt(Path(__file__).resolve().parent / "prompts", "conversation_review")
MAX_TOKENS = 700
KB_EXCERPT_CHARS = 3000
FUZZY_MIN = 0.9
LLM_CONFIDENCE = 0.6


class LlmFinding(BaseModel):
    rule_id: str = Field(min_length=1, max_length=60)
    severity: Severity
    turn: int = Field(ge=0)
    quote: str = Field(min_length=1)
    rationale: str
    fix_target: FixTarget
    fix_text: str
    effort: Effort = "M"


class LlmReview(BaseModel):
    findings: list[LlmFinding] = Field(default_factory=list)


class ReviewResult(BaseModel):
    """What is kept of a review: verified findings and how many were dropped."""

    findings: list[Finding] = Field(default_factory=list)
    unsupported: int = 0


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip(" .,!?;:\"'")


def quote_supported(quote: str, text: str) -> bool:
    """True when `quote` occurs in `text` after normalization, or nearly (ratio >= 0.9)."""
    q, t = _normalize(quote), _normalize(text)
    if not q:
        return False
    if q in t:
        return True
    size = len(q)
    if size > len(t) + 5:
        return False
    step = max(1, size // 10)
    for start in range(0, max(1, len(t) - size + 1), step):
        window = t[start : start + size]
        if difflib.SequenceMatcher(None, q, window).ratio() >= FUZZY_MIN:
            return True
    return False


def review_messages(case: CaseTranscript, manifest: Manifest) -> list[dict[str, str]]:
    truth = manifest.model_dump_json(include={"services", "hours", "policies", "contacts"})
    conversation = "\n".join(
        f"[{t.index}] customer: {t.customer}\n[{t.index}] assistant: {t.reply}" for t in case.turns
    )
    content = PROMPT.render(
        ground_truth=fence(truth, "ground-truth"),
        kb=fence(case.fixture.text[:KB_EXCERPT_CHARS], "kb"),
        conversation=fence(conversation, "conversation"),
    )
    return [{"role": "user", "content": content}]


def verify(case: CaseTranscript, review: LlmReview) -> ReviewResult:
    """Keep the findings whose quote is in the reply they cite; count the others."""
    replies = {t.index: t.reply for t in case.turns}
    kept: list[Finding] = []
    dropped = 0
    for item in review.findings:
        reply = replies.get(item.turn)
        if reply is None or not quote_supported(item.quote, reply):
            dropped += 1
            continue
        rule = re.sub(r"[^a-z0-9_]+", "_", item.rule_id.casefold()).strip("_") or "llm"
        severity: Severity = "major" if item.severity == "critical" else item.severity
        kept.append(
            Finding(
                rule_id=f"llm:{rule}",
                severity=severity,
                case_key=case.case_key,
                turn_index=item.turn,
                subject=item.quote[:200],
                evidence=[Evidence(source="reply", quote=item.quote, turn=item.turn)],
                rationale=(
                    item.rationale
                    if item.severity != "critical"
                    else f"{item.rationale} (reported critical by the LLM judge; unconfirmed)"
                ),
                fix_target=item.fix_target,
                fix_text=item.fix_text,
                effort=item.effort,
                confidence=LLM_CONFIDENCE,
                detector="llm",
                fingerprint=fingerprint(f"llm:{rule}", item.quote),
            )
        )
    return ReviewResult(findings=kept, unsupported=dropped)


def review_case(
    case: CaseTranscript, manifest: Manifest, *, engine: Engine, purpose: str
) -> ReviewResult:
    """One metered review call for a case with turns; the offline implementation finds nothing
    beyond the deterministic checks (it is what the engine falls back to on invalid output)."""
    if not case.turns:
        return ReviewResult()
    review = engine.run(
        role="judge",
        purpose=purpose,
        messages=review_messages(case, manifest),
        max_tokens=MAX_TOKENS,
        output=LlmReview,
        offline=LlmReview,
    )
    return verify(case, review)
