"""The report of a run: the typed `RunReport` (schema), its building from the rows (build,
delta) and its renderings (markdown; the JSON export is `RunReport.to_json()`).

Only the pure parts are imported here, so `python -m runs.report` needs no database.
"""

from runs.report.markdown import report_to_markdown
from runs.report.schema import RunDelta, RunReport

__all__ = ["RunDelta", "RunReport", "report_to_markdown"]
