"""The AI QA Lab pages, the contrib.admin way: run list, Start run, and the run report."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django_htmx.http import HttpResponseStopPolling

from judge.rules import RULES
from qalab.models import Organization
from runs import services
from runs.dispatch import CeleryDispatcher
from runs.forms import StartRunForm
from runs.models import CaseStatus, Run
from runs.selectors import run_get_report, run_list_for_user

VERDICT_CLASS = {
    "FAIL_CRITICAL": "fail",
    "BUDGET_STOPPED": "budget",
    "PASS_WITH_FINDINGS": "warn",
    "PASS_CLEAN": "pass",
}


def organizations_for(user: Any) -> QuerySet[Organization]:
    qs = Organization.objects.all()
    return qs if user.is_superuser else qs.filter(members=user)


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "run_link",
        "organization",
        "preset",
        "status",
        "verdict_badge",
        "overall",
        "tokens",
        "created_at",
    ]
    list_filter = ["status", "verdict", "preset", "organization"]
    list_select_related = ["organization"]
    change_list_template = "admin/runs/run/change_list.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Run]:
        return run_list_for_user(user=request.user)

    # Runs are written only by the pipeline: the admin never adds, edits or deletes them.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

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

    @admin.display(description="Tokens")
    def tokens(self, obj: Run) -> str:
        return f"{obj.tokens_used:,} / {obj.token_budget:,}"

    def get_urls(self) -> list[Any]:
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("start/", self.admin_site.admin_view(self.start_view), name=f"{prefix}_start"),
            path(
                "<int:object_id>/report/",
                self.admin_site.admin_view(self.report_view),
                name=f"{prefix}_report",
            ),
            path("rules/", self.admin_site.admin_view(self.rules_view), name=f"{prefix}_rules"),
            *super().get_urls(),
        ]

    def rules_view(self, request: HttpRequest) -> HttpResponse:
        """The rules catalog: every rule a finding can carry, and how scores are computed."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Rules catalog",
            "rules": RULES,
        }
        return TemplateResponse(request, "admin/runs/run/rules.html", context)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        return HttpResponseRedirect(reverse("admin:runs_run_report", args=[object_id]))

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {"can_start": self._can_start(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context=extra)

    def _can_start(self, request: HttpRequest) -> bool:
        return request.user.has_perm("qalab.start_run") and organizations_for(request.user).exists()

    def start_view(self, request: HttpRequest) -> HttpResponse:
        orgs = organizations_for(request.user)
        if not request.user.has_perm("qalab.start_run"):
            messages.error(request, "You do not have permission to start runs.")
            return HttpResponseRedirect(reverse("admin:runs_run_changelist"))
        form = StartRunForm(request.POST or None, organizations=orgs)
        if request.method == "POST" and form.is_valid():
            try:
                with transaction.atomic():
                    run = services.run_create(
                        organization=form.cleaned_data["organization"],
                        preset=form.cleaned_data["preset"],
                        responder_spec=form.cleaned_data["responder"] or None,
                        reuse_artifacts=form.cleaned_data["same_test_set_as"],
                        created_by=request.user,
                    )
                    services.run_start(run=run, dispatcher=CeleryDispatcher())
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Run #{run.pk} started.")
                return HttpResponseRedirect(reverse("admin:runs_run_report", args=[run.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Start run",
            "form": form,
        }
        return TemplateResponse(request, "admin/runs/run/start.html", context)

    def report_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = get_object_or_404(self.get_queryset(request), pk=object_id)
        report = run_get_report(run=run)
        cases_done = sum(
            1 for c in report["cases"] if c["status"] not in (CaseStatus.QUEUED, CaseStatus.RUNNING)
        )
        tokens = report["tokens"]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Run #{run.pk} — {run.organization.name} · {run.preset}",
            "run": run,
            "report": report,
            "verdict_class": VERDICT_CLASS.get(run.verdict, "running"),
            "cases_done": cases_done,
            "token_pct": min(100, round(100 * tokens["used"] / max(1, tokens["budget"]))),
            "can_rerun": request.user.has_perm("qalab.start_run")
            and run.artifacts.filter(kind="manifest").exists(),
            "findings_by_severity": [
                (sev, [f for f in report["findings"] if f["severity"] == sev])
                for sev in ("critical", "major", "minor")
            ],
        }
        template = "admin/runs/run/report.html"
        if request.htmx:
            if run.is_final:
                # Stop polling and make the page reload into the full report.
                response = HttpResponseStopPolling()
                response["HX-Refresh"] = "true"
                return response
            template += "#progress"
        return TemplateResponse(request, template, context)
