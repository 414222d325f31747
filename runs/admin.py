"""The AI QA Lab pages, the contrib.admin way: runs list with trends, Start run, live progress,
the findings-first report with triage, the case view with highlighted evidence and promote
fixture, the delta, exports and the rules catalog.

Every page of a run goes through `get_queryset`, which only holds runs of the organizations the
user is a member of (superusers: all), so another organization's run is a 404 everywhere.
Every state-changing action is a POST behind the admin's CSRF protection and its permission.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from judge.rules import RULES
from qalab.domain import SEVERITIES, ArtifactKind
from qalab.orgs import organizations_for
from runs import services
from runs.forms import StartRunForm, TriageForm
from runs.highlight import highlight
from runs.models import Run, RunCase, TriageState
from runs.report.build import report_build
from runs.report.delta import delta_build
from runs.report.markdown import report_to_markdown
from runs.report.page import actions_with_groups, finding_groups
from runs.selectors import (
    run_delta_candidates,
    run_get_case,
    run_get_progress,
    run_list_for_user,
    run_score_trends,
)
from runs.tasks import CeleryDispatcher

VERDICT_CLASS = {
    "FAIL_CRITICAL": "fail",
    "BUDGET_STOPPED": "budget",
    "PASS_WITH_FINDINGS": "warn",
    "PASS_CLEAN": "pass",
}
SCORE_LABELS = {
    "groundedness": "Groundedness",
    "extraction_accuracy": "Extraction accuracy",
    "conversation_quality": "Conversation quality",
    "overall": "Overall",
}


def _short(tokens: int) -> str:
    """12,345 -> 12.3k; 100,000 -> 100k."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}".removesuffix(".0") + "k"


def _duration(run: Run) -> str:
    if not run.started_at:
        return "—"
    end = run.finished_at
    if end is None:
        return "running" if not run.is_final else "—"
    seconds = int((end - run.started_at).total_seconds())
    return f"{seconds // 60}m {seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


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
            _short(obj.tokens_used),
            _short(obj.token_budget),
        )

    @admin.display(description="Duration")
    def duration(self, obj: Run) -> str:
        return _duration(obj)

    # ------------------------------------------------------------------ urls

    def get_urls(self) -> list[Any]:
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view

        def action(method: Any) -> Any:
            # State-changing actions: POST only (405 otherwise), CSRF-checked by admin_view.
            return view(require_POST(method))

        return [
            path("start/", view(self.start_view), name=f"{prefix}_start"),
            path("rules/", view(self.rules_view), name=f"{prefix}_rules"),
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
            *super().get_urls(),
        ]

    def _context(self, request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
        return {**self.admin_site.each_context(request), "opts": self.opts, "title": title, **extra}

    def _run(self, request: HttpRequest, object_id: int) -> Run:
        """The run if the user may see it (its organization is theirs), else 404."""
        return get_object_or_404(self.get_queryset(request), pk=object_id)

    def _report_url(self, run: Run, anchor: str = "") -> str:
        return reverse("admin:runs_run_report", args=[run.pk]) + anchor

    # ------------------------------------------------------------------ list and start

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

    def _can_start(self, request: HttpRequest) -> bool:
        return request.user.has_perm("qalab.start_run") and organizations_for(request.user).exists()

    def rules_view(self, request: HttpRequest) -> HttpResponse:
        """The rules catalog: every rule a finding can carry, and how scores are computed."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = self._context(request, "Rules catalog", rules=RULES)
        return TemplateResponse(request, "admin/runs/run/rules.html", context)

    def start_view(self, request: HttpRequest) -> HttpResponse:
        if not request.user.has_perm("qalab.start_run"):
            raise PermissionDenied
        orgs = organizations_for(request.user)
        initial = {}
        if reuse := request.GET.get("same_test_set_as"):
            initial["same_test_set_as"] = reuse
        form = StartRunForm(request.POST or None, organizations=orgs, initial=initial)
        if request.method == "POST" and form.is_valid():
            reuse_id = form.cleaned_data["same_test_set_as"]
            if (
                reuse_id
                and not self.get_queryset(request)
                .filter(pk=reuse_id, organization=form.cleaned_data["organization"])
                .exists()
            ):
                form.add_error("same_test_set_as", f"No run #{reuse_id} of this organization.")
            else:
                try:
                    with transaction.atomic():
                        run = services.run_create(
                            organization=form.cleaned_data["organization"],
                            preset=form.cleaned_data["preset"],
                            responder_spec=form.cleaned_data["responder"] or None,
                            reuse_artifacts=reuse_id,
                            created_by=request.user,
                        )
                        services.run_start(run=run, dispatcher=CeleryDispatcher())
                except ValueError as exc:
                    form.add_error(None, str(exc))
                else:
                    messages.success(request, f"Run #{run.pk} started.")
                    return HttpResponseRedirect(self._report_url(run))
        context = self._context(request, "Start run", form=form)
        return TemplateResponse(request, "admin/runs/run/start.html", context)

    # ------------------------------------------------------------------ report and progress

    def report_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        progress = run_get_progress(run=run)
        context = self._context(
            request,
            f"Run #{run.pk} — {run.org_name} · {run.preset}",
            run=run,
            progress=progress,
            verdict_class=VERDICT_CLASS.get(run.verdict, "running"),
            can_cancel=request.user.has_perm("qalab.start_run")
            and run.status in services.CANCELLABLE_STATUSES,
        )
        if request.htmx and not run.is_final:
            return TemplateResponse(request, "admin/runs/run/report.html#progress", context)
        report = report_build(run=run)
        findings = report.findings
        groups = finding_groups(findings)
        context.update(
            report=report,
            can_rerun=request.user.has_perm("qalab.start_run")
            and run.is_final
            and run.artifacts.filter(kind=ArtifactKind.MANIFEST).exists(),
            can_triage=request.user.has_perm("qalab.triage_finding") and bool(findings),
            triage_states=TriageState.choices,
            triage_counts=[
                (state, label, getattr(report.summary.triage, state))
                for state, label in TriageState.choices
            ],
            groups_by_severity=[
                (sev, [g for g in groups if g.severity == sev]) for sev in SEVERITIES
            ],
            actions=actions_with_groups(report.top_actions, groups),
            token_roles=[
                (role, used, min(100, round(100 * used / max(1, report.tokens.budget))))
                for role, used in report.tokens.by_role.items()
            ],
            snapshot=_snapshot_rows(run),
            delta=report.delta,
        )
        if request.htmx:
            # The last poll: the banner turns into the verdict (no hx-trigger left, so polling
            # stops) and the report body arrives out of band, in place, without a reload.
            return TemplateResponse(request, "admin/runs/run/report.html#final", context)
        return TemplateResponse(request, "admin/runs/run/report.html", context)

    def cancel_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        if not request.user.has_perm("qalab.start_run"):
            raise PermissionDenied
        if services.run_cancel(run_id=run.pk, user=request.user):
            messages.success(request, f"Run #{run.pk} cancelled.")
        else:
            run.refresh_from_db()
            messages.warning(
                request,
                f"Run #{run.pk} is {run.get_status_display()}: it can no longer be cancelled.",
            )
        return HttpResponseRedirect(self._report_url(run))

    def triage_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        if not request.user.has_perm("qalab.triage_finding"):
            raise PermissionDenied
        form = TriageForm(request.POST)
        # Back to the page the reviewer came from: the case view (by its key) or the report.
        case_key = request.POST.get("case", "")
        if case_key and run.cases.filter(scenario_key=case_key).exists():
            back = reverse("admin:runs_run_case", args=[run.pk, case_key])
        else:
            back = self._report_url(run)
        if not form.is_valid():
            errors = "; ".join(e for errs in form.errors.values() for e in errs)
            messages.error(request, f"Nothing triaged: {errors}")
            return HttpResponseRedirect(f"{back}#findings")
        try:
            rows = services.finding_triage(
                run=run,
                finding_ids=form.cleaned_data["finding"],
                state=form.cleaned_data["state"],
                note=form.cleaned_data["note"],
                reviewer=request.user,
            )
        except ValueError as exc:
            messages.error(request, f"Nothing triaged: {exc}")
            return HttpResponseRedirect(f"{back}#findings")
        label = TriageState(form.cleaned_data["state"]).label
        messages.success(request, f"{len(rows)} finding(s) marked {label.lower()}.")
        return HttpResponseRedirect(f"{back}#finding-{rows[0].finding_id}")

    # ------------------------------------------------------------------ case and promote

    def _case(self, run: Run, case_key: str) -> RunCase:
        return get_object_or_404(RunCase, run=run, scenario_key=case_key)

    def case_view(self, request: HttpRequest, object_id: int, case_key: str) -> HttpResponse:
        run = self._run(request, object_id)
        case = self._case(run, case_key)
        data = run_get_case(run=run, case=case)
        for turn in data["turns"]:
            turn["customer_html"] = highlight(turn["customer"], turn["customer_marks"])
            turn["reply_html"] = highlight(turn["reply"], turn["reply_marks"])
        fixture_docs = []
        if data["fixture"] is not None:
            fixture_docs = [
                {"title": d.title, "html": highlight(d.text, data["fixture_marks"])}
                for d in data["fixture"].documents
            ]
        context = self._context(
            request,
            f"Run #{run.pk} · case {case.scenario_key}",
            run=run,
            data=data,
            fixture_docs=fixture_docs,
            can_promote=request.user.has_perm("qalab.promote_fixture")
            and data["fixture"] is not None,
            can_triage=request.user.has_perm("qalab.triage_finding"),
            triage_states=TriageState.choices,
        )
        return TemplateResponse(request, "admin/runs/run/case.html", context)

    def promote_view(self, request: HttpRequest, object_id: int, case_key: str) -> HttpResponse:
        run = self._run(request, object_id)
        case = self._case(run, case_key)
        if not request.user.has_perm("qalab.promote_fixture"):
            raise PermissionDenied
        back = reverse("admin:runs_run_case", args=[run.pk, case.scenario_key])
        try:
            result = services.fixture_promote(run=run, case=case, user=request.user)
        except services.PromoteError as exc:
            messages.error(request, f"Fixture not promoted: {exc}")
            return HttpResponseRedirect(back)
        promotion = result.promotion
        if result.created:
            messages.success(
                request, f"Fixture written to {promotion.path} (sha256 {promotion.sha256[:12]})."
            )
        else:
            who = promotion.promoted_by.get_username() if promotion.promoted_by else "someone"
            messages.warning(
                request,
                f"This fixture was already promoted to {promotion.path} by {who} on "
                f"{promotion.created_at:%Y-%m-%d %H:%M} (run #{promotion.run_id}); nothing written.",
            )
        return HttpResponseRedirect(back)

    # ------------------------------------------------------------------ delta and exports

    def delta_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        candidates = run_delta_candidates(run=run, runs=self.get_queryset(request))
        other = None
        if against := request.GET.get("against"):
            other = next((c for c in candidates if str(c.pk) == against), None)
            if other is None:
                raise Http404(f"No run #{against} of this organization to compare with.")
        delta = delta_build(run=run, other=other)
        context = self._context(
            request,
            f"Run #{run.pk} — delta",
            run=run,
            delta=delta,
            candidates=candidates,
            chosen=other,
            severities=SEVERITIES,
            score_rows=[
                (label, getattr(delta.score_values, name)) for name, label in SCORE_LABELS.items()
            ]
            if delta
            else [],
        )
        return TemplateResponse(request, "admin/runs/run/delta.html", context)

    def export_json(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        report = report_build(run=run).to_json()
        body = json.dumps(report, indent=2, ensure_ascii=False, default=str)
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="qalab-run-{run.pk}.json"'
        return response

    def export_md(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        response = HttpResponse(
            report_to_markdown(report_build(run=run)), content_type="text/markdown; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="qalab-run-{run.pk}.md"'
        return response


def _snapshot_rows(run: Run) -> list[tuple[str, Any]]:
    """What the run was made of, for the report's snapshot table."""
    source = run.source or {}
    artifact_hashes = source.get("artifact_hashes") or {}
    return [
        ("Responder", run.responder_spec),
        ("Engine", run.engine),
        ("Models", ", ".join(f"{k}: {v}" for k, v in sorted(run.models_used.items())) or "—"),
        ("Settings hash", run.settings_hash),
        ("Org context sha256", source.get("org_context_sha256", "—")),
        ("Seed", run.seed),
        ("Code version", source.get("code_version") or "—"),
        ("Test set reused from", run.config.get("reuse_artifacts") or "— (generated)"),
        ("Artifacts", f"{len(artifact_hashes)} hashed" if artifact_hashes else "—"),
        *[(f"Prompt {name}", digest) for name, digest in sorted(source.get("prompts", {}).items())],
    ]
