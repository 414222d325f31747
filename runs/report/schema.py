"""The report of a run as one typed model (DESIGN §11): `RunReport` and its parts, the delta too.

Pure pydantic, no Django: built once from the rows by `runs.report.build`, then read by the
JSON export (`RunReport.to_json()`), the Markdown, the report and delta pages and the selftest.
Field names and their order are the JSON report's: the export dumps them as they are declared.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from qalab.domain import Effort, FixTarget, Severity

# The delta's models and the base live apart (file size); imported from here as before.
from runs.report.delta_schema import (
    ChangedInputs as ChangedInputs,
)
from runs.report.delta_schema import (
    DeltaFindings as DeltaFindings,
)
from runs.report.delta_schema import (
    DeltaItem as DeltaItem,
)
from runs.report.delta_schema import (
    DeltaItems as DeltaItems,
)
from runs.report.delta_schema import (
    RunDelta as RunDelta,
)
from runs.report.delta_schema import (
    ScoreChange as ScoreChange,
)
from runs.report.delta_schema import (
    ScoreChanges as ScoreChanges,
)
from runs.report.delta_schema import (
    Significance as Significance,
)
from runs.report.delta_schema import (
    Snapshot as Snapshot,
)
from runs.report.delta_schema import (
    Snapshots as Snapshots,
)
from runs.report.delta_schema import (
    TokenChange as TokenChange,
)
from runs.report.delta_schema import (
    VerdictChange as VerdictChange,
)
from runs.report.schema_base import (
    ReportModel as ReportModel,
)
from runs.report.schema_base import (
    Scores as Scores,
)
from runs.report.schema_base import (
    SeverityCounts as SeverityCounts,
)
from runs.report.schema_missed import (
    CorrectedCount as CorrectedCount,
)
from runs.report.schema_missed import (
    CorrectedCounts as CorrectedCounts,
)
from runs.report.schema_missed import (
    MissedFindingOut as MissedFindingOut,
)

TriageStateName = Literal["open", "confirmed", "false_positive", "fixed", "wont_fix"]


# --------------------------------------------------------------------------- run and cases


class Tokens(ReportModel):
    """The lab's roles (generator, simulator, judge) spend `budget`; the bot's own calls, when
    the lab runs the bot (role `responder`), spend `responder_budget`, metered apart."""

    budget: int = Field(description="the lab's roles' token budget (generator, simulator, judge)")
    used: int = Field(description="tokens the lab's roles used")
    reserved: int
    by_role: dict[str, int]
    responder_budget: int = Field(
        default=0,
        description="the bot's own token budget, for its calls when the lab runs the bot "
        "(openai-chat:, the reference bot); 0 on runs made before it had one (its tokens are then "
        "in used)",
    )
    responder_used: int = Field(
        default=0, description="tokens the bot used against responder_budget"
    )
    responder_reserved: int = Field(default=0)
    responder_metered: bool = Field(
        default=False,
        description="the lab made the bot's calls through its ledger (false for a bot the lab "
        "only talks to, over HTTP or in Python: its tokens are its own)",
    )
    calls: int = Field(description="ledger rows (requests, plus rows noting a reply's fate)")
    requests: int = Field(description="requests sent to the LLM endpoint (retries included)")
    retries: int = Field(description="attempts the endpoint refused or dropped, tried again")
    invalid: int = Field(description="calls whose reply did not validate (one repair turn each)")
    fallbacks: int = Field(description="calls that fell back to the offline implementation")
    fallbacks_by_role: dict[str, int] = Field(
        description="LLM tasks done by the offline implementation instead of the model, by role"
    )
    fallback_share: float | None = Field(
        description="fallen-back tasks / all LLM tasks (None with the offline engine)"
    )
    replayed: int
    denied: int
    orphaned: int = Field(
        description="reservations a lost worker left open, settled by the reaper at their full "
        "reserved size (the call's real usage was never seen)"
    )
    estimated: bool
    note: str
    judge_held: int = Field(
        default=0,
        description="tokens of the budget held for the judge stage (LLM reviews and top-action "
        "phrasing): generation and simulation could not spend them; 0 on the offline engine",
    )
    judge_share: float = Field(default=0.0, description="judge_held as a share of the budget")


class TriageCounts(ReportModel):
    """How many findings are in each triage state (never triaged: `open`)."""

    open: int
    confirmed: int
    false_positive: int
    fixed: int
    wont_fix: int


class TriageCarry(ReportModel):
    """Triage carried over by fingerprint from the organization's earlier runs."""

    new: int = Field(description="findings with no earlier decision on their fingerprint")
    carried: int = Field(description="findings that inherited an earlier run's decision")
    resolved: int = Field(
        description="fingerprints triaged in the baseline run (not open) that no longer appear, "
        "those whose cases this run did not play and judge left out"
    )
    baseline_run_id: int | None = Field(
        description="the run `resolved` compares with: the delta's previous run"
    )
    resolved_fingerprints: list[str]
    gate_waived: int = Field(
        description="critical findings whose carried decision says they do not fail the gate"
    )


class Summary(ReportModel):
    cases: int
    completed: int
    passed: int
    errored: int
    skipped_budget: int
    interrupted: int = Field(description="cases whose worker was lost and another resumed")
    findings: SeverityCounts
    issues: SeverityCounts = Field(
        description="finding groups (`finding_groups`: one per fingerprint, the same defect "
        "across cases) by their most severe finding"
    )
    unsupported_findings: int = Field(
        description="findings dropped by the evidence check, of every layer (deterministic "
        "checks and the LLM judge): a quote not found verbatim (normalized) in the transcript, KB "
        "or ground truth it cites, or a subject in none of them"
    )
    unsupported_by_rule: dict[str, int] = Field(
        description="unsupported_findings by rule id (LLM-judge rules as llm:<rule>)"
    )
    triage: TriageCounts
    carry: TriageCarry


class Evidence(ReportModel):
    """A quote a finding cites, and where it is (source, 0-based turn)."""

    source: str
    quote: str
    turn: int | None
    # The stored row's key order, kept in the export as it was before the typed report:
    # Postgres JSONB orders keys by length (turn, quote, source), SQLite keeps them as written.
    _keys: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Evidence:
        evidence = handler(data)
        if isinstance(data, dict):
            evidence._keys = tuple(data)
        return evidence

    @model_serializer(mode="wrap")
    def _in_stored_key_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        return {k: out[k] for k in self._keys if k in out} | out


class Fix(ReportModel):
    target: FixTarget
    text: str


class Triage(ReportModel):
    """A finding's current triage decision (the newest one)."""

    state: TriageStateName
    note: str
    reviewer: str | None
    at: str | None = Field(description="ISO 8601 time of the decision")
    carried_from: int | None = Field(
        description="the earlier run whose decision this finding inherited by fingerprint"
    )
    gate_waived: bool = Field(
        description="does not fail the gate (won't fix / false positive): counts toward "
        "FAIL_CRITICAL in no later run that carries the decision"
    )


class Finding(ReportModel):
    id: int
    rule_id: str
    severity: Severity
    case: str | None = Field(description="the case's id; None for a run-wide finding")
    turn: int | None
    subject: str
    evidence: list[Evidence]
    rationale: str
    fix: Fix
    effort: Effort
    confidence: float
    detector: str
    fingerprint: str
    confirmed: bool
    corroborating: list[str] = Field(
        description="rules whose findings on the same reply span were merged into this one"
    )
    triage: Triage


class FindingTrials(ReportModel):
    """Where an issue was found in a run of several trials per scenario."""

    seen: int = Field(description="trials (cases) it was found in")
    played: int = Field(description="trials played and judged of the scenarios it was found in")
    flaky: bool = Field(
        description="found in some of a scenario's judged trials but not all: the bot does not "
        "do it every time"
    )


class FindingGroup(ReportModel):
    """One issue: the findings that share a fingerprint (the same invented price in every case,
    one question repeated in several), whatever their severities. The report page, the Markdown
    and the JUnit list these groups, built once by the report build."""

    fingerprint: str
    rule_id: str
    severity: Severity = Field(description="the most severe of its findings")
    subject: str = Field(description="its first (most severe) finding's subject")
    count: int = Field(description="how many findings it holds")
    cases: list[str] = Field(description="the cases it occurs in, sorted")
    finding_ids: list[int] = Field(
        description="its findings, in report order: the first is the one shown"
    )
    trials: FindingTrials | None = Field(
        default=None,
        description="in a run of several trials, in how many of its scenarios' trials it was "
        "found (None: one trial, or a run-wide finding)",
    )


class TopAction(ReportModel):
    rank: int
    title: str
    target_layer: FixTarget
    effort: Effort
    rationale: str
    finding_ids: list[int]


class Turn(ReportModel):
    index: int
    customer: str
    reply: str
    extracted: dict[str, Any]
    status: str | None
    usage: dict[str, Any]
    latency_ms: int
    attempt: int


class Interruption(ReportModel):
    """A case taken over by another worker after the one playing it stopped renewing its lease."""

    attempt: int = Field(description="the attempt that took the case over (the first is 1)")
    after_turn: int = Field(
        description="turns kept from earlier attempts: the conversation resumed at this index"
    )
    reason: str


class Case(ReportModel):
    id: str = Field(description="the case's key: its scenario's key, then '.t<n>' from trial 2")
    scenario_key: str = Field(description="the scenario (blueprint) the case plays")
    trial: int = Field(description="which play of its scenario the case is (1 to the run's trials)")
    scenario: str
    fixture: str
    noise_level: str | None
    fixture_metrics: dict[str, Any]
    session_id: str
    status: str
    error: str | None
    expected_status: str
    actual_status: str | None
    turns: list[Turn]
    attempts: int = Field(description="workers that took the case in hand (1 when none was lost)")
    interruptions: list[Interruption]
    scores: Scores
    passed: bool | None = Field(alias="pass")
    unsupported_by_rule: dict[str, int] = Field(
        description="the case's findings dropped by the evidence check, by rule"
    )
    skipped_checks: list[str] = Field(
        default_factory=list,
        description="checks (and 'semantic') not run because the case's judging deadline "
        "(QALAB_JUDGE_DEADLINE_S, CPU seconds) had passed; absent when none was skipped",
    )
    truncated_turns: list[int] = Field(
        default_factory=list,
        description="turns (0-based) whose customer message, reply or an extracted value was "
        "longer than QALAB_JUDGE_MAX_CHARS: judged on their first that many characters; absent "
        "when none was cut",
    )

    @model_serializer(mode="wrap")
    def _without_empty_judge_limits(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A case the judge read whole and finished keeps the keys it always had.
        out = handler(self)
        for key in ("skipped_checks", "truncated_turns"):
            if not out.get(key):
                out.pop(key, None)
        return out

    @property
    def judge_limited(self) -> bool:
        """The judge skipped checks of this case or read some of its turns in part."""
        return bool(self.skipped_checks or self.truncated_turns)


# --------------------------------------------------------------------------- the report


class ScenarioTrials(ReportModel):
    """One scenario over its trials (the cases that played it)."""

    scenario_key: str
    scenario: str = Field(description="its scenario type")
    cases: list[str] = Field(description="its cases' ids, trial 1 first")
    played: int = Field(description="trials judged (a trial that errored counts, failed)")
    passed: int = Field(description="trials that passed")
    pass_rate: float | None = Field(description="passed / played; None when none was judged")
    pass_all: bool | None = Field(
        description="pass^k: all k trials passed (None: a trial was not played and none failed)"
    )
    pass_any: bool | None = Field(
        description="pass@k: at least one trial passed (None: a trial was not played and none "
        "passed)"
    )
    flaky: bool = Field(description="some judged trials passed and some failed")


class Trials(ReportModel):
    """A run that plays each scenario k times (`--trials K`): how consistently the bot passes."""

    k: int = Field(description="trials per scenario")
    played: int = Field(description="trials judged, all scenarios together")
    passed: int
    pass_rate: float | None = Field(description="passed / played")
    pass_hat_k: float | None = Field(
        description="pass^k: the share of scenarios all of whose k trials passed (over the "
        "scenarios where it is known)"
    )
    pass_at_k: float | None = Field(
        description="pass@k: the share of scenarios with at least one passing trial"
    )
    flaky_scenarios: int = Field(description="scenarios whose trials passed and failed")
    flaky_issues: int = Field(description="finding groups found in some trials only")
    scenarios: list[ScenarioTrials]


class InProgress(ReportModel):
    """A run exported before it is final: where it is, and that nothing in it is a verdict."""

    stage: str = Field(description="the run's status now (queued, generating, simulating, ...)")
    detail: str
    cases_done: int
    cases_total: int
    note: str


class RunReport(ReportModel):
    """The JSON report of DESIGN §11 (plus verdict, reason, fixtures and case errors)."""

    model_config = ConfigDict(title="AI QA Lab run report")

    run_id: int
    organization: str
    preset: str
    status: str
    verdict: str | None
    verdict_reason: str
    in_progress: InProgress | None = Field(
        description="set while the run is not final: the export is a snapshot, with no verdict"
    )
    engine: str
    models: dict[str, str]
    responder: str
    bot_called: bool = Field(
        description="false when the bot under test was never called: an openai-chat: bot on the "
        "offline engine, the lab's reference bot standing in (QALAB_OPENAI_CHAT_STAND_IN); such "
        "a run is one of the lab's own, never a real bot's result"
    )
    bot_not_called: str | None = Field(description="why the bot was not called (None: it was)")
    probe: str = Field(
        default="",
        description="'selftest', 'canary' or 'stand-in' for one of the lab's own runs (it tests "
        "the lab, not a bot; never a baseline), '' for a real bot's run",
    )
    settings_hash: str
    seed: int
    judge_layers: list[str] = Field(
        description="the judge's layers that ran: deterministic (always), semantic (the "
        "sentence encoder and heads, unless QALAB_SEMANTIC=off), llm (the openai engine)"
    )
    as_of: str = Field(
        description="the run's reference date (ISO 8601 day): scenario dates count from it; "
        "same organization context, preset, seed and as-of date give identical artifacts"
    )
    config: dict[str, Any]
    source: dict[str, Any]
    started_at: str | None = Field(description="ISO 8601")
    finished_at: str | None = Field(description="ISO 8601")
    error: str | None
    tokens: Tokens
    scores: Scores
    summary: Summary
    findings: list[Finding]
    finding_groups: list[FindingGroup] = Field(
        description="the findings grouped by fingerprint, most severe group first, then in "
        "report order; every finding is in exactly one group"
    )
    missed_findings: list[MissedFindingOut] = Field(
        default_factory=list,
        description="defects the judge missed, added by reviewers on the locked run (or carried "
        "from an earlier run): not in findings, summary or verdict",
    )
    verdict_with_missed: str | None = Field(
        default=None,
        description="the verdict the gate would give the findings plus missed_findings (None: "
        "no miss, or no verdict); the run's verdict stays what it was",
    )
    corrected: CorrectedCounts | None = Field(
        default=None,
        description="the critical and major counts corrected by each rule's precision on the "
        "organization's own triage labels (None while the run is not final)",
    )
    top_actions: list[TopAction]
    trials: Trials | None = Field(
        default=None,
        description="set when the run plays each scenario more than once (`--trials K`): "
        "pass rate, pass^k and pass@k per scenario and for the run",
    )
    cases: list[Case]
    delta: RunDelta | None


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema a JSON export validates against (the models' validation schema: every
    field is required, no unknown key); docs/report.schema.json holds it, `python -m
    runs.report` writes it."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **RunReport.model_json_schema(mode="validation"),
    }
