"""The report page (live progress, findings-first report, triage), cancel and the exports."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from qalab.domain import SEVERITIES, ArtifactKind
from runs import services
from runs.admin.common import VERDICT_CLASS, RunPagesBase, lab_run_no_baseline, snapshot_rows
from runs.admin.findings_html import finding_items_html
from runs.forms import TriageForm
from runs.models import TriageState
from runs.report.build import report_build
from runs.report.markdown import judge_limit_notes, report_to_markdown
from runs.report.page import actions_with_groups, finding_groups
from runs.report.schema import Tokens
from runs.report.trials import trials_line
from runs.report.words import corrected_line, share_pct
from runs.selectors import run_get_progress


def token_roles(tokens: Tokens) -> list[tuple[str, int, int, str]]:
    """(role, tokens, meter width in %, share of its budget) per role: the bot's own calls
    (role responder) against the bot's budget when the run meters them apart, the lab's roles
    against the lab's. The share never reads 100% (or 0%) unless it is exactly that."""
    rows = []
    for role, used in tokens.by_role.items():
        apart = role == "responder" and tokens.responder_budget > 0
        budget = max(1, tokens.responder_budget if apart else tokens.budget)
        rows.append((role, used, min(100, round(100 * used / budget)), share_pct(used / budget)))
    return rows


class ReportPages(RunPagesBase):
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
        groups = finding_groups(report)
        can_triage = request.user.has_perm("qalab.triage_finding") and bool(findings)
        by_severity = [(sev, [g for g in groups if g.severity == sev]) for sev in SEVERITIES]
        context.update(
            report=report,
            can_rerun=request.user.has_perm("qalab.start_run")
            and run.is_final
            and run.artifacts.filter(kind=ArtifactKind.MANIFEST).exists(),
            can_triage=can_triage,
            triage_states=TriageState.choices,
            triage_counts=[
                (state, label, getattr(report.summary.triage, state))
                for state, label in TriageState.choices
            ],
            groups_by_severity=[
                (
                    sev,
                    of_sev,
                    finding_items_html(of_sev, severity=sev, run_pk=run.pk, can_triage=can_triage),
                )
                for sev, of_sev in by_severity
            ],
            actions=actions_with_groups(report.top_actions, groups),
            token_roles=token_roles(report.tokens),
            snapshot=snapshot_rows(run),
            delta=report.delta,
            judge_limit_notes=judge_limit_notes(report),
            trials_line=trials_line(report.trials) if report.trials else "",
            corrected_line=corrected_line(report.corrected),
            lab_run_no_baseline=lab_run_no_baseline(run),
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
        if case_key and run.cases.with_key(case_key).exists():
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
                gate_waived=form.cleaned_data["gate_waived"],
            )
        except ValueError as exc:
            messages.error(request, f"Nothing triaged: {exc}")
            return HttpResponseRedirect(f"{back}#findings")
        label = TriageState(form.cleaned_data["state"]).label
        waiver = (
            " They will not fail the gate in later runs that carry this decision; "
            f"run #{run.pk}'s own verdict does not change."
            if form.cleaned_data["gate_waived"]
            else ""
        )
        messages.success(request, f"{len(rows)} finding(s) marked {label.lower()}.{waiver}")
        return HttpResponseRedirect(f"{back}#finding-{rows[0].finding_id}")

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
