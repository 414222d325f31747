"""The runs list: columns, filters and score trends."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from runs.admin.common import VERDICT_CLASS, RunPagesBase, run_duration, short_tokens
from runs.models import Run
from runs.selectors import run_score_trends


class RunListPages(RunPagesBase):
    list_display = [
        "run_link",
        "organization",
        "preset",
        "status",
        "verdict_badge",
        "overall",
        "tokens",
        "duration",
        "created_at",
    ]
    list_filter = [
        # Only the organizations of runs the user may see (not every org's name).
        ("organization", admin.RelatedOnlyFieldListFilter),
        "preset",
        "verdict",
        "status",
        ("created_at", admin.DateFieldListFilter),
    ]
    list_select_related = ["organization"]
    list_per_page = 50
    change_list_template = "admin/runs/run/change_list.html"

    # ------------------------------------------------------------------ list columns

    @admin.display(description="Run", ordering="id")
    def run_link(self, obj: Run) -> str:
        url = reverse("admin:runs_run_report", args=[obj.pk])
        return format_html('<a href="{}">#{}</a>', url, obj.pk)

    @admin.display(description="Verdict", ordering="verdict")
    def verdict_badge(self, obj: Run) -> str:
        if not obj.verdict:
            return "—"
        return format_html(
            '<span class="qa-badge qa-{}">{}</span>',
            VERDICT_CLASS.get(obj.verdict, ""),
            obj.verdict,
        )

    @admin.display(description="Overall", ordering="score_overall")
    def overall(self, obj: Run) -> str:
        return "—" if obj.score_overall is None else f"{obj.score_overall * 100:.1f}%"

    @admin.display(description="Tokens used / budget")
    def tokens(self, obj: Run) -> str:
        return format_html(
            '<span title="{} of {} tokens">{} / {}</span>',
            f"{obj.tokens_used:,}",
            f"{obj.token_budget:,}",
            short_tokens(obj.tokens_used),
            short_tokens(obj.token_budget),
        )

    @admin.display(description="Duration")
    def duration(self, obj: Run) -> str:
        return run_duration(obj)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {
            "title": "Runs",
            "can_start": self._can_start(request),
            "trends": run_score_trends(runs=self.get_queryset(request)),
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=extra)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        return HttpResponseRedirect(reverse("admin:runs_run_report", args=[object_id]))
