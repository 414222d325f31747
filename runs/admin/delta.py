"""The delta page: a run against its default baseline or one the reviewer picks."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from qalab.domain import SEVERITIES
from runs.admin.common import SCORE_LABELS, RunPagesBase, lab_run_no_baseline
from runs.report.delta import delta_build, run_get_previous
from runs.report.words import baseline_scope, no_baseline_text
from runs.selectors import run_delta_candidates


class DeltaPages(RunPagesBase):
    def delta_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        run = self._run(request, object_id)
        candidates = run_delta_candidates(run=run, runs=self.get_queryset(request))
        baseline = run_get_previous(run=run)
        other = None
        if against := request.GET.get("against"):
            other = next((c for c in candidates if str(c.pk) == against), None)
            if other is None:
                raise Http404(f"No run #{against} of this organization to compare with.")
            if baseline is not None and other.pk == baseline.pk:
                other = None  # picking the default baseline is the default delta
        delta = delta_build(run=run, other=other)
        scope = {"org_slug": run.org_slug, "preset": run.preset, "responder": run.responder_spec}
        context = self._context(
            request,
            f"Run #{run.pk} — delta",
            run=run,
            delta=delta,
            baseline=baseline,
            baseline_scope=baseline_scope(**scope),
            no_baseline=lab_run_no_baseline(run) or no_baseline_text(**scope),
            lab_run=bool(run.probe),
            real_candidates=[c for c in candidates if not c.probe],
            probe_candidates=[c for c in candidates if c.probe],
            chosen=other,
            severities=SEVERITIES,
            score_rows=[
                (label, getattr(delta.score_values, name)) for name, label in SCORE_LABELS.items()
            ]
            if delta
            else [],
        )
        return TemplateResponse(request, "admin/runs/run/delta.html", context)
