"""The report's parts from the reviewers (issue 36): defects the judge missed, added by reviewers
(`RunReport.missed_findings`, point 2), and the judge's counts corrected by the reviewers'
measured precision (`RunReport.corrected`, point 4). Apart from `runs.report.schema` for its
size; imported from there."""

from __future__ import annotations

from pydantic import Field

from qalab.domain import Severity
from runs.report.schema_base import ReportModel


class MissedFindingOut(ReportModel):
    """A defect the judge missed on a turn, added by a reviewer after the run was locked (or
    carried from an earlier run where one was). Never part of the run's findings or verdict."""

    rule_id: str = Field(description="a rule of the catalog, or 'other' (see other_text)")
    other_text: str = Field(description="what was missed, in the reviewer's words (rule 'other')")
    severity: Severity
    case: str = Field(description="the case's id")
    turn: int = Field(description="the turn (0-based) the quote is from")
    quote: str = Field(description="the turn's words that show it, verbatim")
    note: str
    reviewer: str | None = Field(description="who added it (None: a deleted user)")
    at: str = Field(description="ISO 8601 time it was added (in the earlier run, if carried)")
    carried_from: int | None = Field(
        description="the earlier run it was added on, when this run's bot still says the quote "
        "in a case of the same scenario (None: added on this run)"
    )
    fingerprint: str = Field(description="the same miss across runs: rule and quote")


class CorrectedCount(ReportModel):
    """One severity's findings corrected by the reviewers' measured precision of each rule."""

    severity: Severity
    reported: int = Field(description="the judge's findings of this severity in the run")
    estimate: float | None = Field(
        description="about how many are real: each rule's findings times its precision on the "
        "organization's labels, summed (None: too few labels, see note)"
    )
    low: float | None = Field(description="95% low end: each rule's Wilson lower bound")
    high: float | None = Field(description="95% high end: each rule's Wilson upper bound")
    labels: int = Field(description="the labels (decisions made by hand) it rests on")
    note: str = Field(description="what it rests on, or why there is no estimate")


class CorrectedCounts(ReportModel):
    """The judge's critical and major counts corrected for its false alarms, as the team's own
    reviewers measured them (`runs.accuracy`, `judge.agreement.corrected_count`)."""

    min_labels: int = Field(description="labels a rule needs before its findings are corrected")
    critical: CorrectedCount
    major: CorrectedCount
