"""The report's part for defects the judge missed, added by reviewers (issue 36, point 2):
`RunReport.missed_findings`. Apart from `runs.report.schema` for its size; imported from there."""

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
