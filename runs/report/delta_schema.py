"""The delta of a run against an earlier one, as typed models (`RunDelta`, built by
`runs.report.delta`, part of `runs.report.schema.RunReport`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from qalab.domain import Severity
from runs.report.schema_base import ReportModel, Scores, SeverityCounts


class VerdictChange(ReportModel):
    previous: str | None
    current: str | None
    changed: bool


class ScoreChange(ReportModel):
    previous: float | None
    current: float | None
    change: float | None


class ScoreChanges(ReportModel):
    groundedness: ScoreChange
    extraction_accuracy: ScoreChange
    conversation_quality: ScoreChange
    overall: ScoreChange


class TokenChange(ReportModel):
    previous: int
    current: int
    change: int


class DeltaItem(ReportModel):
    """One fingerprint: the first (most severe) finding that carries it, and how many do."""

    fingerprint: str
    finding_id: int
    rule_id: str
    severity: Severity
    case: str | None
    subject: str
    count: int


_NOT_PLAYED = (
    "in the previous run, absent now only because every case it was found in was not played "
    "and judged by this run (cancelled, skipped on budget, errored, or a run without a "
    "verdict): not resolved"
)


class DeltaItems(ReportModel):
    new: list[DeltaItem]
    resolved: list[DeltaItem]
    persisting: list[DeltaItem]
    not_played: list[DeltaItem] = Field(default_factory=list, description=_NOT_PLAYED)


class DeltaFindings(ReportModel):
    new: SeverityCounts
    resolved: SeverityCounts = Field(
        description="in the previous run, absent from this one although a case it was found "
        "in was played and judged"
    )
    persisting: SeverityCounts
    not_played: SeverityCounts = Field(
        default_factory=lambda: SeverityCounts(critical=0, major=0, minor=0),
        description=_NOT_PLAYED,
    )
    new_fingerprints: list[str]
    resolved_fingerprints: list[str]
    not_played_fingerprints: list[str] = Field(default_factory=list, description=_NOT_PLAYED)
    items: DeltaItems


class ChangedInputs(ReportModel):
    responder: bool
    org_context: bool
    engine_or_models: bool
    settings: bool = Field(
        description="a run setting changed (settings_changed is not empty); the seed, the "
        "reference date (as_of) and the reused test set's run id are not settings: "
        "test_set_identical says what they change"
    )
    settings_changed: list[str] = Field(
        description="config keys whose value changed (max_turns, token_budget, json_mode, ...), "
        "other than seed, as_of, reuse_artifacts and the responder, engine and models named apart"
    )
    test_set_identical: bool
    engine: bool
    models: list[str] = Field(description="roles whose model changed")
    kb_documents: list[str] = Field(description="KB documents added, removed or changed")
    prompts: list[str] = Field(description="prompt files added, removed or changed")
    code_version: bool


class Snapshot(ReportModel):
    run_id: int
    responder: str
    engine: str
    models: dict[str, str]
    settings_hash: str
    code_version: str | None


class Snapshots(ReportModel):
    previous: Snapshot
    current: Snapshot


class Significance(ReportModel):
    """Whether the change is more than noise (`judge.significance`): on the same test set the
    runs are compared scenario by scenario (paired); on different test sets there is no test."""

    paired: bool = Field(description="both runs played the same test set")
    note: str = Field(description="what was compared, or why there is no test, in words")
    scenarios: int = Field(description="scenarios both runs played and judged")
    change: Literal["improved", "regressed", "no significant change"] | None = Field(
        description="None when not paired"
    )
    mean_score_change: float | None = Field(
        description="mean per-scenario change of the overall score (current minus previous)"
    )
    interval: list[float] | None = Field(
        description="95% paired-bootstrap interval of mean_score_change [low, high]"
    )
    resamples: int = Field(description="bootstrap resamples (seeded)")
    p_value: float | None = Field(description="exact McNemar test on pass/fail flips")
    to_fail: list[str] = Field(description="scenarios that passed before and fail now")
    to_pass: list[str] = Field(description="scenarios that failed before and pass now")


class RunDelta(ReportModel):
    """This run against an earlier one of the same organization: verdict, scores, findings by
    fingerprint, tokens, and which snapshot inputs changed."""

    previous_run_id: int
    basis: Literal["previous", "chosen"] = Field(
        description="previous: the default baseline, the latest final run (with a verdict) "
        "of the same organization, preset and responder, the lab's own runs left out; "
        "chosen: picked by the reviewer"
    )
    basis_reason: str = Field(
        description="which run was compared with and why, in words: 'latest final run of "
        "demo · quick · responder reference' or 'chosen by the reviewer'"
    )
    verdict: VerdictChange
    scores: Scores = Field(description="current minus previous, per dimension")
    score_values: ScoreChanges
    findings: DeltaFindings
    tokens: int = Field(description="tokens used, current minus previous")
    token_values: TokenChange
    changed_inputs: ChangedInputs
    significance: Significance
    snapshots: Snapshots
