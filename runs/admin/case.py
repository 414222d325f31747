"""The case page (transcript with highlighted evidence, fixture) and promote fixture."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from runs import services
from runs.admin.common import RunPagesBase
from runs.highlight import highlight
from runs.models import Run, RunCase, TriageState
from runs.selectors import run_get_case


class CasePages(RunPagesBase):
    def _case(self, run: Run, case_key: str) -> RunCase:
        return get_object_or_404(RunCase.objects.filter(run=run).with_key(case_key))

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
            f"Run #{run.pk} · case {case.key}",
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
        back = reverse("admin:runs_run_case", args=[run.pk, case.key])
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
