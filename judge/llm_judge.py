"""The LLM judge: one conversation-level review per case, whose evidence is machine-verified.

The model sees the transcript, the KB excerpt and the ground truth fenced as untrusted text and
answers in a strict schema. Every finding must quote the reply it is about; a quote that is not
found in that reply (normalized, or fuzzy with similarity >= 0.9) drops the finding, and the
drop is counted as unsupported. A critical LLM finding is re-judged once by a second, independent
call; if that pass does not confirm it, it is downgraded to major and marked unconfirmed, so it
never gates the run (DESIGN §9).
"""

from __future__ import annotations

import difflib
import json
import re
from functools import partial
from pathlib import Path

from pydantic import BaseModel, Field

from generator.schemas import Manifest
from judge.gate import fingerprint
from judge.review_context import relevant_kb, relevant_truth
from judge.schemas import CaseTranscript, Evidence, Finding
from qalab.domain import Effort, FixTarget, Severity
from qalab.fanout import FanOut, serial
from qalab.llm import Engine, Message
from qalab.llm.prompts import fence, load_prompt

PROMPTS = Path(__file__).resolve().parent / "prompts"
PROMPT = load_prompt(PROMPTS, "conversation_review")
CONFIRM_PROMPT = load_prompt(PROMPTS, "confirm_critical")
CONFIRM_MAX_TOKENS = 150
# A review of a few findings (about 120 tokens each) fits well under this cap.
MAX_TOKENS = 600
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


class Confirmation(BaseModel):
    confirmed: bool
    rationale: str = ""


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
    content = PROMPT.render(
        ground_truth=fence(relevant_truth(case, manifest), "ground-truth"),
        kb=fence(relevant_kb(case), "kb"),
        conversation=fence(_conversation(case), "conversation"),
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
        kept.append(
            Finding(
                rule_id=f"llm:{rule}",
                severity=item.severity,
                case_key=case.case_key,
                turn_index=item.turn,
                subject=item.quote[:200],
                evidence=[Evidence(source="reply", quote=item.quote, turn=item.turn)],
                rationale=item.rationale,
                fix_target=item.fix_target,
                fix_text=item.fix_text,
                effort=item.effort,
                confidence=LLM_CONFIDENCE,
                detector="llm",
                fingerprint=fingerprint(f"llm:{rule}", item.quote),
                # Not confirmed until a second pass says so (see `confirm_criticals`).
                confirmed=item.severity != "critical",
            )
        )
    return ReviewResult(findings=kept, unsupported=dropped)


def downgrade(finding: Finding, why: str) -> Finding:
    """An unconfirmed critical: kept as major, marked, never gating."""
    return finding.model_copy(
        update={
            "severity": "major",
            "confirmed": False,
            "rationale": f"{finding.rationale} (reported critical by the LLM judge; not "
            f"confirmed by a second pass: {why})",
        }
    )


def _conversation(case: CaseTranscript) -> str:
    return "\n".join(
        f"[{t.index}] customer: {t.customer}\n[{t.index}] assistant: {t.reply}" for t in case.turns
    )


def confirm_messages(case: CaseTranscript, manifest: Manifest, finding: Finding) -> list[Message]:
    claimed = json.dumps(
        {
            "turn": finding.turn_index,
            "quote": finding.evidence[0].quote,
            "rule": finding.rule_id,
            "rationale": finding.rationale,
        },
        ensure_ascii=False,
    )
    content = CONFIRM_PROMPT.render(
        ground_truth=fence(relevant_truth(case, manifest), "ground-truth"),
        kb=fence(relevant_kb(case), "kb"),
        conversation=fence(_conversation(case), "conversation"),
        finding=fence(claimed, "finding"),
    )
    return [{"role": "user", "content": content}]


def confirm_criticals(
    case: CaseTranscript,
    manifest: Manifest,
    findings: list[Finding],
    *,
    engine: Engine,
    purpose: str,
    fan_out: FanOut = serial,
) -> list[Finding]:
    """Re-judge each unconfirmed critical once; keep it critical only when confirmed.

    The confirmations do not depend on each other: `fan_out` may run them side by side. The
    offline implementation does not confirm (it has no second opinion to give), so an LLM
    critical that reaches it through a fallback is downgraded, never trusted blindly.
    """

    def confirm(n: int, finding: Finding) -> Finding:
        verdict = engine.run(
            role="judge",
            purpose=f"{purpose}:confirm{n}",
            messages=confirm_messages(case, manifest, finding),
            max_tokens=CONFIRM_MAX_TOKENS,
            output=Confirmation,
            offline=lambda: Confirmation(confirmed=False, rationale="no second opinion offline"),
        )
        if verdict.confirmed:
            return finding.model_copy(update={"confirmed": True})
        return downgrade(finding, verdict.rationale or "not confirmed")

    todo = [n for n, f in enumerate(findings) if f.severity == "critical" and not f.confirmed]
    confirmed = dict(
        zip(todo, fan_out([partial(confirm, n, findings[n]) for n in todo]), strict=True)
    )
    return [confirmed.get(n, f) for n, f in enumerate(findings)]


def review_case(
    case: CaseTranscript,
    manifest: Manifest,
    *,
    engine: Engine,
    purpose: str,
    fan_out: FanOut = serial,
) -> ReviewResult:
    """One metered review call for a case with turns, then one confirmation call per critical
    (side by side through `fan_out`).

    The offline implementation finds nothing beyond the deterministic checks (it is what the
    engine falls back to on invalid output)."""
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
    result = verify(case, review)
    confirmed = confirm_criticals(
        case, manifest, result.findings, engine=engine, purpose=purpose, fan_out=fan_out
    )
    return result.model_copy(update={"findings": confirmed})
