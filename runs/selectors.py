"""Reads of runs: the report of DESIGN §11, the delta, and what the pages list."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django.db.models import Count, Prefetch, QuerySet, Sum

from judge.schemas import CaseJudgement, CaseScores
from qalab.llm.base import ROLES
from runs.models import CaseStatus, LlmCall, Run, RunCase, RunFinding, RunStatus, RunTurn

SEVERITIES = ("critical", "major", "minor")


def run_list_for_user(*, user: Any) -> QuerySet[Run]:
    """Runs the user may see: all for superusers, else those of their organizations."""
    qs = Run.objects.select_related("organization")
    if not user.is_superuser:
        qs = qs.filter(organization__members=user)
    return qs


def run_case_judgements(run: Run) -> list[CaseJudgement]:
    """The stored per-case scores as judge objects (for run-level scoring)."""
    out = []
    for case in run.cases.filter(status=CaseStatus.DONE, score_overall__isnull=False):
        out.append(
            CaseJudgement(
                case_key=case.scenario_key,
                findings=[],
                scores=CaseScores(
                    groundedness=case.score_groundedness,
                    extraction_accuracy=case.score_extraction,
                    conversation_quality=case.score_quality,
                    overall=case.score_overall,
                ),
                passed=bool(case.passed),
            )
        )
    return out


def run_tokens(run: Run) -> dict[str, Any]:
    by_role = dict.fromkeys(ROLES, 0)
    rows = (
        LlmCall.objects.filter(run=run).values("role").annotate(total=Sum("actual"), n=Count("id"))
    )
    calls = 0
    for row in rows:
        by_role[row["role"]] = row["total"] or 0
        calls += row["n"]
    estimated = LlmCall.objects.filter(run=run, estimated=True, actual__gt=0).exists()
    statuses = Counter(
        status.split(":")[0]
        for status in LlmCall.objects.filter(run=run).values_list("status", flat=True)
    )
    return {
        "budget": run.token_budget,
        "used": run.tokens_used,
        "reserved": run.tokens_reserved,
        "by_role": by_role,
        "calls": calls,
        # Attempts the endpoint refused or dropped and that were tried again.
        "retries": statuses["retry"],
        # Calls whose reply did not validate (each got one repair turn).
        "invalid": statuses["invalid"],
        # Calls that fell back to the offline implementation after the repair failed too.
        "fallbacks": statuses["fallback"],
        "replayed": statuses["replayed"],
        "denied": statuses["denied"],
        "estimated": estimated,
        "note": "estimated tokens (chars/4) metered by the offline engine" if estimated else "",
    }


def _unsupported_findings(run: Run) -> int:
    return sum(
        json.loads(content).get("unsupported", 0)
        for content in run.artifacts.filter(kind="llm_review").values_list("content", flat=True)
    )


def _finding_dict(f: RunFinding) -> dict[str, Any]:
    return {
        "id": f.id,
        "rule_id": f.rule_id,
        "severity": f.severity,
        "case": f.case.scenario_key if f.case else None,
        "turn": f.turn_index,
        "subject": f.subject,
        "evidence": f.evidence,
        "rationale": f.rationale,
        "fix": {"target": f.fix_target, "text": f.fix_text},
        "effort": f.effort,
        "confidence": f.confidence,
        "detector": f.detector,
        "fingerprint": f.fingerprint,
        "confirmed": f.confirmed,
    }


def _turn_dict(t: RunTurn) -> dict[str, Any]:
    return {
        "index": t.index,
        "customer": t.customer_message,
        "reply": t.responder_reply,
        "extracted": t.extracted,
        "status": t.responder_status or None,
        "usage": t.usage,
        "latency_ms": t.latency_ms,
        "attempt": t.attempt,
    }


def _scores(g: float | None, e: float | None, q: float | None, o: float | None) -> dict[str, Any]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    return {
        "groundedness": r(g),
        "extraction_accuracy": r(e),
        "conversation_quality": r(q),
        "overall": r(o),
    }


def _severity_sort_key(f: RunFinding) -> tuple[int, int]:
    return (SEVERITIES.index(f.severity), f.position)


def run_get_findings(run: Run) -> list[RunFinding]:
    """Findings critical -> major -> minor, in judge order within a severity."""
    rows = list(run.findings.select_related("case"))
    return sorted(rows, key=_severity_sort_key)


def run_get_report(*, run: Run, include_delta: bool = True) -> dict[str, Any]:
    """The JSON report of DESIGN §11 (plus verdict, reason, fixtures and case errors)."""
    cases = list(
        RunCase.objects.filter(run=run)
        .order_by("scenario_key")
        .prefetch_related(Prefetch("turns", queryset=RunTurn.objects.order_by("index")))
    )
    findings = run_get_findings(run)
    fixtures = {
        a.key: a
        for a in run.artifacts.filter(kind="fixture").only(
            "key", "noise_level", "metrics", "sha256"
        )
    }
    counts = Counter(f.severity for f in findings)
    report: dict[str, Any] = {
        "run_id": run.id,
        "organization": run.organization.slug,
        "preset": run.preset,
        "status": run.status,
        "verdict": run.verdict or None,
        "verdict_reason": run.verdict_reason,
        "engine": run.engine,
        "models": run.models_used,
        "responder": run.responder_spec,
        "settings_hash": run.settings_hash,
        "seed": run.seed,
        "config": run.config,
        "source": run.source,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "error": run.error or None,
        "tokens": run_tokens(run),
        "scores": _scores(
            run.score_groundedness, run.score_extraction, run.score_quality, run.score_overall
        ),
        "summary": {
            "cases": len(cases),
            "completed": sum(1 for c in cases if c.status == CaseStatus.DONE),
            "passed": sum(1 for c in cases if c.passed),
            "errored": sum(1 for c in cases if c.status == CaseStatus.ERROR),
            "skipped_budget": sum(1 for c in cases if c.status == CaseStatus.SKIPPED_BUDGET),
            "findings": {s: counts.get(s, 0) for s in SEVERITIES},
            # LLM-judge findings dropped because their evidence quote was not in the transcript.
            "unsupported_findings": _unsupported_findings(run),
        },
        "findings": [_finding_dict(f) for f in findings],
        "top_actions": [
            {
                "rank": a.rank,
                "title": a.title,
                "target_layer": a.target_layer,
                "effort": a.effort,
                "rationale": a.rationale,
                "finding_ids": a.finding_ids,
            }
            for a in run.top_actions.order_by("rank")
        ],
        "cases": [
            {
                "id": c.scenario_key,
                "scenario": c.scenario_type,
                "fixture": c.fixture_key,
                "noise_level": fixtures[c.fixture_key].noise_level
                if c.fixture_key in fixtures
                else None,
                "fixture_metrics": fixtures[c.fixture_key].metrics
                if c.fixture_key in fixtures
                else {},
                "session_id": c.session_id,
                "status": c.status,
                "error": c.error or None,
                "expected_status": c.expected_status,
                "actual_status": c.actual_status or None,
                "turns": [_turn_dict(t) for t in c.turns.all()],
                "scores": _scores(
                    c.score_groundedness, c.score_extraction, c.score_quality, c.score_overall
                ),
                "pass": c.passed,
            }
            for c in cases
        ],
        "delta": run_get_delta(run=run) if include_delta else None,
    }
    return report


def run_get_previous(*, run: Run) -> Run | None:
    """The previous reported run of the same organization and preset."""
    return (
        Run.objects.filter(
            organization_id=run.organization_id,
            preset=run.preset,
            id__lt=run.id,
            locked_at__isnull=False,
        )
        .exclude(status=RunStatus.ERROR)
        .order_by("-id")
        .first()
    )


def run_get_delta(*, run: Run, other: Run | None = None) -> dict[str, Any] | None:
    """Compare with `other` (default: the previous reported run of the same org and preset)."""
    base = other or run_get_previous(run=run)
    if base is None:
        return None
    now_fp = {f.fingerprint: f.severity for f in run.findings.all()}
    then_fp = {f.fingerprint: f.severity for f in base.findings.all()}

    def sev_counts(fps: set[str], source: dict[str, str]) -> dict[str, int]:
        c = Counter(source[fp] for fp in fps)
        return {s: c.get(s, 0) for s in SEVERITIES}

    new, resolved = set(now_fp) - set(then_fp), set(then_fp) - set(now_fp)
    persisting = set(now_fp) & set(then_fp)

    def diff(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else round(a - b, 4)

    art = run.source.get("artifact_hashes")
    base_art = base.source.get("artifact_hashes")
    return {
        "previous_run_id": base.id,
        "verdict": {"previous": base.verdict or None, "current": run.verdict or None},
        "scores": {
            "groundedness": diff(run.score_groundedness, base.score_groundedness),
            "extraction_accuracy": diff(run.score_extraction, base.score_extraction),
            "conversation_quality": diff(run.score_quality, base.score_quality),
            "overall": diff(run.score_overall, base.score_overall),
        },
        "findings": {
            "new": sev_counts(new, now_fp),
            "resolved": sev_counts(resolved, then_fp),
            "persisting": sev_counts(persisting, now_fp),
            "new_fingerprints": sorted(new),
            "resolved_fingerprints": sorted(resolved),
        },
        "tokens": run.tokens_used - base.tokens_used,
        "changed_inputs": {
            "responder": run.responder_spec != base.responder_spec,
            "org_context": run.source.get("org_context_sha256")
            != base.source.get("org_context_sha256"),
            "engine_or_models": (run.engine, run.models_used) != (base.engine, base.models_used),
            "settings": run.settings_hash != base.settings_hash,
            "test_set_identical": bool(art) and art == base_art,
        },
    }
