"""An organization's judge accuracy page (issue 36): the judge measured against the
organization's own reviewers. Per rule, its precision on the triage labels made by hand (Wilson
95% interval, label count) and the misses reviewers added by hand; the rules below
QALAB_JUDGE_PRECISION_FLOOR on at least QALAB_JUDGE_PRECISION_MIN_LABELS labels flagged, with
their worst false positives linked; the same table per engine and per judge version; and where
reviewers disagree, with Cohen's kappa per pair of reviewers. The figures are `runs.accuracy`'s.

Real bots' runs and the lab's own (selftest, canary, stand-in) are never mixed: the page shows
one or the other (`?runs=lab`). Only organizations the user may see: another is a 404.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from runs.accuracy import (
    ENGINE_NAMES,
    WORST_EXAMPLES,
    group_tables,
    judge_version,
    missed_by_hand,
    reviewer_agreement,
    rule_rows,
    triage_labels,
    worst_examples,
)
from runs.admin.trend import TrendPages
from runs.models import Run


class AccuracyPages(TrendPages):
    def accuracy_view(self, request: HttpRequest, org: str) -> HttpResponse:
        organization = self._organization(request, org)  # 404 unless the user's
        lab = request.GET.get("runs") == "lab"
        floor: float = settings.QALAB_JUDGE_PRECISION_FLOOR
        min_labels: int = settings.QALAB_JUDGE_PRECISION_MIN_LABELS
        labels = triage_labels(organization, lab=lab)
        missed = missed_by_hand(organization, lab=lab)
        rows = [
            replace(row, examples=worst_examples(labels, row.rule_id, limit=WORST_EXAMPLES))
            if row.flagged
            else row
            for row in rule_rows(labels, missed, floor=floor, min_labels=min_labels)
        ]
        runs = list(Run.objects.filter(organization=organization).only("id", "engine", "source"))
        engine_of = {run.id: run.engine for run in runs}
        version_of = {run.id: judge_version(run) for run in runs}
        versions = {v: f"Judge {v}" for v in version_of.values()}
        by_engine, by_version = (
            group_tables(labels, missed, key_of, names, floor=floor, min_labels=min_labels)
            for key_of, names in ((engine_of, ENGINE_NAMES), (version_of, versions))
        )
        here = reverse("admin:runs_run_accuracy", args=[organization.slug])
        context: dict[str, Any] = self._context(
            request,
            f"Judge accuracy — {organization.name}",
            organization=organization,
            lab=lab,
            real_url=here,
            lab_url=here + "?runs=lab",
            labels=len(labels),
            wrong=sum(not label.right for label in labels),
            rules=rows,
            flagged=[row for row in rows if row.flagged],
            missed=missed,
            by_engine=by_engine,
            by_version=by_version,
            agreement=reviewer_agreement(organization, lab=lab),
            floor=floor,
            min_labels=min_labels,
            trend_url=reverse("admin:runs_run_trend", args=[organization.slug]),
            runs_url=reverse("admin:runs_run_changelist")
            + f"?organization__id__exact={organization.pk}",
        )
        return TemplateResponse(request, "admin/runs/run/accuracy.html", context)
