"""The delta page: a run against the previous one or one the reviewer picks."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from qalab.domain import SEVERITIES
from runs.admin.common import SCORE_LABELS, RunPagesBase
from runs.report.delta import delta_build
from runs.selectors import run_delta_candidates


class DeltaPages(RunPagesBase):
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
