"""The LLM judge: one conversation-level review per case, whose evidence is machine-verified.

The model sees the transcript, the KB excerpt and the ground truth fenced as untrusted text and
answers in a strict schema. Every finding must quote the reply it is about; a quote that is not
found in that reply (`judge.evidence`, the one check every layer's findings pass: normalized,
or fuzzy with similarity >= 0.9 for the model's quotes) drops the finding, and the drop is
counted as unsupported. A critical LLM finding is re-judged once by a second, independent
call; if that pass does not confirm it, it is downgraded to major and marked unconfirmed, so it
never gates the run (DESIGN §9).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import partial
from pathlib import Path

from pydantic import BaseModel, Field

from generator.schemas import Manifest
from judge.evidence import verify_findings
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
    # The dropped findings by rule ("llm:<rule>"); empty in reviews stored before it was kept.
    unsupported_by_rule: dict[str, int] = Field(default_factory=dict)


def review_messages(case: CaseTranscript, manifest: Manifest) -> list[dict[str, str]]:
    content = PROMPT.render(
        ground_truth=fence(relevant_truth(case, manifest), "ground-truth"),
        kb=fence(relevant_kb(case), "kb"),
        conversation=fence(_conversation(case), "conversation"),
    )
    return [{"role": "user", "content": content}]


def verify(case: CaseTranscript, review: LlmReview) -> ReviewResult:
    """Keep the findings whose quote is in the reply they cite (`judge.evidence`); count the
    others by rule."""
    replies = {t.index for t in case.turns}
    findings: list[Finding] = []
    dropped: Counter[str] = Counter()
    for item in review.findings:
        rule = re.sub(r"[^a-z0-9_]+", "_", item.rule_id.casefold()).strip("_") or "llm"
        if item.turn not in replies:
            dropped[f"llm:{rule}"] += 1
            continue
        findings.append(
            Finding(
                rule_id=f"llm:{rule}",
                severity=item.severity,
                case_key=case.case_key,
                turn_index=item.turn,
                subject=item.quote[:200],
                key=item.quote,
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
    kept, unsupported = verify_findings(case, None, findings)
    dropped.update(unsupported)
    return ReviewResult(
        findings=kept,
        unsupported=sum(dropped.values()),
        unsupported_by_rule=dict(sorted(dropped.items())),
    )


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
    """One JSON object per turn, `{"turn", "customer", "assistant"}`: a reply's newlines and
    quotes stay inside its own string, so no reply can forge a turn, a speaker or a fence line
    (issue 33)."""
    return "\n".join(
        json.dumps(
            {"turn": t.index, "customer": t.customer, "assistant": t.reply}, ensure_ascii=False
        )
        for t in case.turns
    )


def confirm_messages(case: CaseTranscript, manifest: Manifest, finding: Finding) -> list[Message]:
    # The conversation up to the finding's reply: a later reply cannot make that one true or
    # false, and the ground truth and KB shown follow what was said by then (issue 34: fewer
    # tokens for the lab's roles).
    if finding.turn_index is not None:
        turns = [t for t in case.turns if t.index <= finding.turn_index] or case.turns
        case = case.model_copy(update={"turns": turns})
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
