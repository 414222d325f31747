"""The runs list: columns that tell a run's story (responder, verdict, score with the trend of
its organization + responder), the lab's own runs marked (and a filter for them), and score
trends; a staff user who is no organization's member is told why the list is empty.

The page costs a fixed number of queries whatever the number of runs: the sparklines of all its
rows come from one query (`runs.trends.run_sparklines`).
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlsplit

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from qalab.orgs import organizations_for
from runs.admin.common import (
    VERDICT_CLASS,
    RunPagesBase,
    no_membership_hint,
    run_duration,
    short_tokens,
)
from runs.models import Run, RunQuerySet
from runs.report.words import share_pct
from runs.selectors import run_score_trends
from runs.trends import SPARK_HEIGHT, SPARK_WIDTH, Sparkline, run_sparklines

RESPONDER_WIDTH = 24


def short_responder(spec: str, width: int = RESPONDER_WIDTH) -> str:
    """A responder spec that fits a list column: a URL without its scheme and query, a python
    spec by its function, then cut in the middle (the full spec goes in the title)."""
    if spec.startswith(("http://", "https://")):
        parts = urlsplit(spec)
        path = parts.path.rstrip("/")
        spec = parts.netloc + path
        if len(spec) > width and path.count("/") > 1:
            spec = f"{parts.netloc}/…/{path.rsplit('/', 1)[1]}"
    elif spec.startswith("python:") and spec.count(":") >= 2:
        spec = "python:…:" + spec.rsplit(":", 1)[1]
    if len(spec) <= width:
        return spec
    head = (width - 1) * 2 // 3
    return spec[:head] + "…" + spec[len(spec) - (width - 1 - head) :]


class ProbeFilter(admin.SimpleListFilter):
    """Every run by default, the lab's own (selftest, canary, stand-in) marked with a badge, so a
    canary run just started from the form is in the list; real bots' runs or the lab's own
    alone on request (`?probe=real`, `?probe=lab`)."""

    title = "runs of"
    parameter_name = "probe"
    DEFAULT = "all"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            (self.DEFAULT, "All (the lab's own marked)"),
            ("real", "Real bots"),
            ("lab", "The lab's own (selftest, canary, stand-in)"),
        ]

    def choices(self, changelist: ChangeList) -> Any:
        current = self.value() or self.DEFAULT
        for lookup, title in self.lookup_choices:
            yield {
                "selected": current == lookup,
                "query_string": (
                    changelist.get_query_string(remove=[self.parameter_name])
                    if lookup == self.DEFAULT
                    else changelist.get_query_string({self.parameter_name: lookup})
                ),
                "display": title,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet[Run]) -> QuerySet[Run]:
        runs = cast(RunQuerySet, queryset)  # the admin's get_queryset: Run.objects
        if self.value() == "real":
            return runs.of_real_bots()
        if self.value() == "lab":
            return runs.of_the_lab()
        return runs


def sparkline_svg(spark: Sparkline, run_id: int) -> SafeString:
    """A small inline SVG of the scores, with this row's own run marked if it is one of them."""
    marker: SafeString | str = ""
    if run_id in spark.run_ids:
        x, y = spark.points[spark.run_ids.index(run_id)]
        marker = format_html('<circle cx="{}" cy="{}" r="2.2"/>', f"{x:.1f}", f"{y:.1f}")
    return format_html(
        '<svg class="qa-spark" data-runs="{}" viewBox="-3 0 {} {}" width="{}" height="{}" '
        'role="img" aria-label="{}"><title>{}</title><polyline points="{}"/>{}</svg>',
        ",".join(map(str, spark.run_ids)),
        SPARK_WIDTH + 6,
        SPARK_HEIGHT,
        SPARK_WIDTH * 3 // 4 + 4,
        SPARK_HEIGHT * 3 // 4,
        spark.label,
        spark.label,
        spark.polyline,
        marker,
    )


class RunListPages(RunPagesBase):
    list_display = [
        "run_link",
        "org_link",
        "responder",
        "preset",
        "verdict_badge",
        "score",
        "tokens",
        "duration",
        "created",
    ]
    # The run column links to the report itself (no link to the admin's change form).
    list_display_links = None
    list_filter = [
        ProbeFilter,
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

    @admin.display(description="Organization", ordering="organization__name")
    def org_link(self, obj: Run) -> str:
        org = obj.organization
        return format_html(
            '<a class="qa-org" href="{}" title="{} ({}): score trend">{}</a>',
            reverse("admin:runs_run_trend", args=[org.slug]),
            org.name,
            org.slug,
            org.name,
        )

    @admin.display(description="Responder", ordering="responder_spec")
    def responder(self, obj: Run) -> str:
        badge = (
            format_html(' <span class="qa-badge qa-probe">{}</span>', obj.probe)
            if obj.probe
            else ""
        )
        return format_html(
            '<span class="qa-resp"><span class="qa-responder" title="{}">{}</span>{}</span>',
            obj.responder_spec,
            short_responder(obj.responder_spec),
            badge,
        )

    @admin.display(description="Verdict", ordering="verdict")
    def verdict_badge(self, obj: Run) -> str:
        if not obj.verdict:
            return format_html('<span class="qa-status">{}</span>', obj.get_status_display())
        return format_html(
            '<span class="qa-badge qa-{}" title="{}">{}</span>',
            VERDICT_CLASS.get(obj.verdict, ""),
            obj.verdict_reason,
            obj.verdict,
        )

    @admin.display(description="Score", ordering="score_overall")
    def score(self, obj: Run) -> str:
        shown = "—" if obj.score_overall is None else share_pct(obj.score_overall)
        spark: Sparkline | None = getattr(obj, "qa_sparkline", None)
        return format_html(
            '<span class="qa-score"><span class="qa-score-n">{}</span>{}</span>',
            shown,
            sparkline_svg(spark, obj.pk) if spark else "",
        )

    @admin.display(description="Tokens")
    def tokens(self, obj: Run) -> str:
        return format_html(
            '<span title="Tokens used / budget: {} of {}">{} / {}</span>',
            f"{obj.tokens_used:,}",
            f"{obj.token_budget:,}",
            short_tokens(obj.tokens_used),
            short_tokens(obj.token_budget),
        )

    @admin.display(description="Duration")
    def duration(self, obj: Run) -> str:
        return run_duration(obj)

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: Run) -> str:
        local = timezone.localtime(obj.created_at)
        short = "%d %b %H:%M" if local.year == timezone.localtime().year else "%d %b %Y"
        return format_html(
            '<time datetime="{}" title="{}">{}</time>',
            local.isoformat(),
            local.strftime("%Y-%m-%d %H:%M:%S %Z"),
            local.strftime(short),
        )

    # ------------------------------------------------------------------ the page

    def get_changelist_instance(self, request: HttpRequest) -> ChangeList:
        """The admin's change list, each row of its page given the sparkline of its
        organization + responder (one query for the whole page)."""
        changelist = super().get_changelist_instance(request)
        rows = list(changelist.result_list)  # evaluated once: the template reuses these rows
        sparklines = run_sparklines(
            runs=self.get_queryset(request),
            pairs=((run.organization_id, run.responder_spec) for run in rows),
        )
        for run in rows:
            run.qa_sparkline = sparklines.get((run.organization_id, run.responder_spec))
        # The default view says what its marked rows are, when it shows any.
        lab_rows = sum(1 for run in rows if run.probe)
        if lab_rows and ProbeFilter.parameter_name not in changelist.params:
            changelist.qa_lab_note = {
                "rows": lab_rows,
                "real_only": changelist.get_query_string({ProbeFilter.parameter_name: "real"}),
            }
        return changelist

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        has_orgs = organizations_for(request.user).exists()
        extra = {
            "title": "Runs",
            "can_start": request.user.has_perm("qalab.start_run") and has_orgs,
            "no_membership": no_membership_hint(request.user, has_orgs=has_orgs),
            "trends": run_score_trends(runs=self.get_queryset(request).of_real_bots()),
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=extra)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        """A run has no change form: its report. An id that is no run of the user's is a 404
        (`abc`, `-1`, `²`, a number past any column), never a 500."""
        if not (object_id.isascii() and object_id.isdigit()):
            raise Http404("No run with that id.")
        run = self._run(request, int(object_id))
        return HttpResponseRedirect(reverse("admin:runs_run_report", args=[run.pk]))
