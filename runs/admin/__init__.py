"""The AI QA Lab pages, the contrib.admin way: runs list with trends, Start run, live progress,
the findings-first report with triage, the case view with highlighted evidence and promote
fixture, the delta, exports, the rules catalog, an organization's score trend and its judge
accuracy. One module per page family; `RunAdmin` puts them together and routes their URLs.

Every page of a run goes through `get_queryset`, which only holds runs of the organizations the
user is a member of (superusers: all), so another organization's run is a 404 everywhere.
Every state-changing action is a POST behind the admin's CSRF protection and its permission.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.urls import path
from django.views.decorators.http import require_POST

from runs.admin.accuracy import AccuracyPages
from runs.admin.case import CasePages
from runs.admin.delta import DeltaPages
from runs.admin.listing import RunListPages
from runs.admin.report import ReportPages
from runs.admin.start import StartPages
from runs.admin.trend import TrendPages
from runs.models import Run


@admin.register(Run)
class RunAdmin(
    RunListPages, StartPages, ReportPages, CasePages, DeltaPages, AccuracyPages, TrendPages
):
    def get_urls(self) -> list[Any]:
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view

        def action(method: Any) -> Any:
            # State-changing actions: POST only (405 otherwise), CSRF-checked by admin_view.
            return view(require_POST(method))

        return [
            path("start/", view(self.start_view), name=f"{prefix}_start"),
            path("rules/", view(self.rules_view), name=f"{prefix}_rules"),
            path("trend/<str:org>/", view(self.trend_view), name=f"{prefix}_trend"),
            path("accuracy/<str:org>/", view(self.accuracy_view), name=f"{prefix}_accuracy"),
            path("<int:object_id>/report/", view(self.report_view), name=f"{prefix}_report"),
            path("<int:object_id>/cancel/", action(self.cancel_view), name=f"{prefix}_cancel"),
            path("<int:object_id>/triage/", action(self.triage_view), name=f"{prefix}_triage"),
            path("<int:object_id>/delta/", view(self.delta_view), name=f"{prefix}_delta"),
            path(
                "<int:object_id>/export.json", view(self.export_json), name=f"{prefix}_export_json"
            ),
            path("<int:object_id>/export.md", view(self.export_md), name=f"{prefix}_export_md"),
            path(
                "<int:object_id>/cases/<str:case_key>/",
                view(self.case_view),
                name=f"{prefix}_case",
            ),
            path(
                "<int:object_id>/cases/<str:case_key>/promote/",
                action(self.promote_view),
                name=f"{prefix}_promote",
            ),
            path(
                "<int:object_id>/cases/<str:case_key>/missed/",
                action(self.missed_view),
                name=f"{prefix}_missed",
            ),
            *super().get_urls(),
        ]
