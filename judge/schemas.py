"""Pydantic contracts of the judge: a case transcript in; findings, scores and actions out."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from generator.schemas import Blueprint, Fixture
from qalab.domain import Effort, FixTarget, Severity

EvidenceSource = Literal[
    "reply", "customer", "extracted", "fixture", "manifest", "persona", "error"
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(_Model):
    index: int = Field(ge=0)
    customer: str
    reply: str
    extracted: dict[str, str] = Field(default_factory=dict)
    status: str | None = None


class CaseTranscript(_Model):
    """One executed scenario as the judge sees it."""

    case_key: str
    blueprint: Blueprint
    fixture: Fixture
    turns: list[Turn]
    actual_status: str | None = None


class Evidence(_Model):
    source: EvidenceSource
    quote: str = Field(min_length=1)
    turn: int | None = None


class Finding(_Model):
    rule_id: str
    severity: Severity
    case_key: str
    turn_index: int | None
    subject: str = Field(
        description="what the finding is about, verbatim from its evidence: the price as the "
        "reply wrote it, the sentence that asks again ..."
    )
    # The canonical form the fingerprint hashes ("money:45 EUR" for a subject "€45", an intake
    # field's key); empty in findings stored before it was kept, which hashed their subject.
    key: str = ""
    evidence: list[Evidence] = Field(min_length=1)
    rationale: str
    fix_target: FixTarget
    fix_text: str
    effort: Effort
    confidence: float = Field(ge=0, le=1)
    detector: str
    fingerprint: str
    # False for an LLM finding whose critical severity a second pass did not confirm (it is
    # then downgraded to major and never gates the run).
    confirmed: bool = True
    # Rules whose findings on the same reply span were merged into this one (one defect = one
    # finding): they corroborate it and are not reported separately.
    corroborating: list[str] = Field(default_factory=list)


class CaseScores(_Model):
    """Each dimension in [0, 1]; None when it does not apply to the case."""

    groundedness: float | None
    extraction_accuracy: float | None
    conversation_quality: float | None
    overall: float


class CaseJudgement(_Model):
    case_key: str
    findings: list[Finding]
    scores: CaseScores
    passed: bool
    # Findings dropped because a quote or their subject is not in what they cite, by rule.
    unsupported_by_rule: dict[str, int] = Field(default_factory=dict)
    # Checks (and "semantic") not run because the case's judging deadline had passed.
    skipped_checks: list[str] = Field(default_factory=list)
    # Turns whose customer message, reply or an extracted value was longer than
    # `JudgeConfig.max_chars`: judged on their first max_chars characters.
    truncated_turns: list[int] = Field(default_factory=list)


class TopAction(_Model):
    rank: int = Field(ge=1, le=5)
    title: str
    target_layer: FixTarget
    effort: Effort
    rationale: str
    finding_indexes: list[int] = Field(description="indexes into the run's finding list")


class RunScores(_Model):
    groundedness: float | None
    extraction_accuracy: float | None
    conversation_quality: float | None
    overall: float | None


Verdict = Literal["FAIL_CRITICAL", "PASS_WITH_FINDINGS", "PASS_CLEAN", "BUDGET_STOPPED"]


class JudgeConfig(_Model):
    strictness: float = Field(ge=0, le=1)
    min_score_to_pass: float = Field(ge=0, le=1)
    max_questions_per_turn: int = 2
    # The semantic layer (judge/semantic/): on by default; its per-rule threshold overrides and
    # the folder its model files are read from (None: the installed packages).
    semantic: bool = True
    semantic_thresholds: dict[str, float] = Field(default_factory=dict)
    # Confirm-threshold overrides (an organization's re-fitted ones, `qalab_train_heads`);
    # a rule not named keeps `judge.semantic.thresholds.CONFIRM_THRESHOLDS`.
    semantic_confirm_thresholds: dict[str, float] = Field(default_factory=dict)
    semantic_model_dir: str | None = None
    # CPU seconds one case's checks may take (issue 33): past it the remaining checks, and the
    # semantic layer, are skipped and named (`CaseJudgement.skipped_checks`). None: no
    # deadline (runs set it from QALAB_JUDGE_DEADLINE_S).
    deadline_s: float | None = Field(default=None, gt=0)
    # Characters of each customer message, reply and extracted value the judge reads (issue
    # 33): a longer text is judged on its prefix (`judge.engine.bound_case`) and its turn is
    # named (`CaseJudgement.truncated_turns`). None: whole texts (runs and `qalab_judge` set
    # it from QALAB_JUDGE_MAX_CHARS).
    max_chars: int | None = Field(default=None, ge=1)

    @property
    def threshold(self) -> float:
        """Seed 000: effective_threshold = min_score_to_pass + strictness * 0.2."""
        return self.min_score_to_pass + self.strictness * 0.2
