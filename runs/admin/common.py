"""What every run page shares: verdict classes, labels, formatting, and the base class whose
`get_queryset` every page goes through (runs of the user's organizations only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse

from runs.models import Run
from runs.report import words
from runs.report.build import run_judge_layers
from runs.selectors import run_list_for_user
from runs.simulator.http_mapping import mapping_summary

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


def no_membership_hint(user: Any, *, has_orgs: bool) -> str:
    """What a staff user who is no organization's member is told on the runs list and the Start
    run page ("": a member, or a superuser, who sees every organization)."""
    if has_orgs or user.is_superuser:
        return ""
    return (
        "You are not a member of any organization yet, so you see no runs and cannot start one: "
        "a run belongs to an organization and shows only to its members. A superuser adds "
        "members on the organization's page (Organizations › the organization › Members); ask "
        "one to add you."
    )


def lab_run_no_baseline(run: Run) -> str:
    """Why one of the lab's own runs (selftest, canary, stand-in) has no default delta, in
    sentences of its own ("" for a real bot's run)."""
    return words.lab_run_no_baseline(run_id=run.pk, probe=run.probe)


def short_tokens(tokens: int) -> str:
    """12,345 -> 12.3k; 100,000 -> 100k."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}".removesuffix(".0") + "k"


def run_duration(run: Run) -> str:
    if not run.started_at:
        return "—"
    end = run.finished_at
    if end is None:
        return "running" if not run.is_final else "—"
    seconds = int((end - run.started_at).total_seconds())
    return f"{seconds // 60}m {seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class RunPagesBase(admin.ModelAdmin):
    """The run admin's base: who sees which runs, and the helpers of every page."""

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

    def _context(self, request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
        return {**self.admin_site.each_context(request), "opts": self.opts, "title": title, **extra}

    def _run(self, request: HttpRequest, object_id: int) -> Run:
        """The run if the user may see it (its organization is theirs), else 404."""
        return get_object_or_404(self.get_queryset(request), pk=object_id)

    def _report_url(self, run: Run, anchor: str = "") -> str:
        return reverse("admin:runs_run_report", args=[run.pk]) + anchor


def snapshot_rows(run: Run) -> list[tuple[str, Any]]:
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
        ("As of (reference date)", run.as_of.isoformat()),
        ("Judge layers", ", ".join(run_judge_layers(run))),
        ("Code version", source.get("code_version") or "—"),
        ("Test set reused from", run.config.get("reuse_artifacts") or "— (generated)"),
        ("Artifacts", f"{len(artifact_hashes)} hashed" if artifact_hashes else "—"),
        *[(f"Prompt {name}", digest) for name, digest in sorted(source.get("prompts", {}).items())],
        *_responder_rows(run),
    ]


def _responder_rows(run: Run) -> list[tuple[str, Any]]:
    """The run's mapping of a bot of its own JSON shape, and what the bot said to the
    preflight's greeting (read through that mapping, when there is one)."""
    rows: list[tuple[str, Any]] = []
    if http := run.config.get("responder_http"):
        rows.append(("Responder mapping", mapping_summary(http)))
    if preflight := (run.source or {}).get("preflight"):
        said = f"“{preflight.get('reply', '')}”"
        if preflight.get("status"):
            said += f" · status {preflight['status']}"
        if preflight.get("extracted"):
            said += " · " + ", ".join(f"{k}={v}" for k, v in preflight["extracted"].items())
        label = "Preflight reply (mapped)" if preflight.get("mapped") else "Preflight reply"
        rows.append((label, f"{said} · {preflight.get('latency_ms', 0)} ms"))
    return rows
