"""The base of the report's typed models (`runs.report.schema`, `runs.report.delta_schema`):
the frozen, closed `ReportModel` and the parts both the run and the delta use."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ReportModel(BaseModel):
    """Frozen and closed: an unknown or missing key is an error, in the code and in the schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (what the exports write), keys as in DESIGN §11."""
        return self.model_dump(mode="json", by_alias=True)


class Scores(ReportModel):
    """Each dimension in [0, 1], rounded to 4 places; None when it does not apply."""

    groundedness: float | None
    extraction_accuracy: float | None
    conversation_quality: float | None
    overall: float | None


class SeverityCounts(ReportModel):
    critical: int
    major: int
    minor: int

    @property
    def total(self) -> int:
        return self.critical + self.major + self.minor
