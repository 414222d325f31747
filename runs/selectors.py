"""Reads of runs: what the pages list, live progress, the case view and score trends; the
report and the delta in their JSON form (the typed report is built in `runs.report`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from judge.schemas import CaseJudgement, CaseScores
from qalab.domain import ArtifactKind
from runs.artifacts import MANIFEST_KEY, blueprint_of, fixture_of, manifest_of
from runs.models import (
    CaseStatus,
    FindingTriage,
    PromotedFixture,
    Run,
    RunArtifact,
    RunCase,
    RunFinding,
)
from runs.report.build import run_triage_latest as run_triage_latest
from runs.report.parts import severity_sort_key


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
                case_key=case.key,
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


def run_delta_candidates(*, run: Run, runs: QuerySet[Run], limit: int = 50) -> list[Run]:
    """Final runs of the same organization a reviewer may compare this one with, out of `runs`
    (those the caller may see): a real bot's runs first, then the lab's own (selftest, canary:
    `Run.probe` names them), each newest first and at most `limit` of each."""
    final = (
        runs.filter(organization_id=run.organization_id, locked_at__isnull=False)
        .exclude(id=run.id)
        .select_related(None)
        .only("id", "preset", "status", "verdict", "created_at", "responder_spec", "source")
        .order_by("-id")
    )
    real_bots = Run.objects.of_real_bots().values("id")
    return [*final.filter(id__in=real_bots)[:limit], *final.exclude(id__in=real_bots)[:limit]]


# --------------------------------------------------------------------------- progress and case


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None else round(((end or timezone.now()) - start).total_seconds(), 1)


def run_get_progress(*, run: Run) -> dict[str, Any]:
    """What the live progress shows: stage, cases done / total with per-case status, turns and
    elapsed time, tokens used vs budget. Two queries, whatever the run's size."""
    cases = list(
        RunCase.objects.filter(run=run)
        .order_by("scenario_key", "trial")
        .annotate(turn_count=Count("turns"))
        .only(
            "scenario_key",
            "trial",
            "scenario_type",
            "status",
            "error",
            "started_at",
            "finished_at",
        )
    )
    pending = (CaseStatus.QUEUED, CaseStatus.RUNNING)
    return {
        "status": run.status,
        "stage_detail": run.stage_detail,
        "cases": [
            {
                "id": c.key,
                "trial": c.trial,
                "scenario": c.scenario_type,
                "status": c.status,
                "turns": c.turn_count,
                "elapsed": _seconds(c.started_at, c.finished_at),
                "error": c.error or None,
            }
            for c in cases
        ],
        "total": len(cases),
        "done": sum(1 for c in cases if c.status not in pending),
        "elapsed": _seconds(run.started_at or run.created_at, run.finished_at),
        "tokens": {
            "used": run.tokens_used,
            "budget": run.token_budget,
            "pct": min(100, round(100 * run.tokens_used / max(1, run.token_budget))),
            # The bot's own calls when the lab runs it, against their own budget.
            "bot_used": run.responder_tokens_used,
            "bot_budget": run.responder_token_budget,
        },
    }


def _evidence_turn(evidence: dict[str, Any], finding: RunFinding) -> int | None:
    turn = evidence.get("turn")
    return finding.turn_index if turn is None else turn


def run_get_case(*, run: Run, case: RunCase) -> dict[str, Any]:
    """One case for the case view: turns with the quotes each finding cites in them, intake
    fields (persona value vs last extracted value), the fixture the responder saw, the case's
    findings with their triage history, and where the fixture was promoted, if it was."""
    from judge.fields import values_match

    turns = list(case.turns.order_by("index"))
    findings = sorted(case.findings.all(), key=severity_sort_key)
    history: dict[int, list[FindingTriage]] = {f.id: [] for f in findings}
    for row in (
        FindingTriage.objects.filter(finding__in=[f.id for f in findings])
        .select_related("reviewer")
        .order_by("-id")
    ):
        history[row.finding_id].append(row)
    artifacts = {
        (a.kind, a.key): a
        for a in RunArtifact.objects.filter(run=run).filter(
            Q(kind=ArtifactKind.BLUEPRINT, key=case.scenario_key)
            | Q(kind=ArtifactKind.FIXTURE, key=case.fixture_key)
            | Q(kind=ArtifactKind.MANIFEST)
        )
    }
    blueprint_row = artifacts.get((ArtifactKind.BLUEPRINT, case.scenario_key))
    fixture_row = artifacts.get((ArtifactKind.FIXTURE, case.fixture_key))
    manifest_row = artifacts.get((ArtifactKind.MANIFEST, MANIFEST_KEY))
    blueprint = blueprint_of(blueprint_row) if blueprint_row else None
    fixture = fixture_of(fixture_row) if fixture_row else None
    manifest = manifest_of(manifest_row) if manifest_row else None

    # Quotes to mark: (turn index, "customer" | "reply") -> [(quote, finding id)].
    marks: dict[tuple[int | None, str], list[tuple[str, int]]] = {}
    fixture_marks: list[tuple[str, int]] = []
    for f in findings:
        for ev in f.evidence:
            if ev.get("source") in ("customer", "reply"):
                key = (_evidence_turn(ev, f), ev["source"])
                marks.setdefault(key, []).append((ev.get("quote", ""), f.id))
            elif ev.get("source") == "fixture":
                fixture_marks.append((ev.get("quote", ""), f.id))

    extracted: dict[str, tuple[str, int]] = {}
    turn_rows = []
    for t in turns:
        for k, v in (t.extracted or {}).items():
            if str(v).strip():
                extracted[k] = (str(v), t.index)
        turn_rows.append(
            {
                "index": t.index,
                "customer": t.customer_message,
                "reply": t.responder_reply,
                "extracted": t.extracted,
                "status": t.responder_status or None,
                "latency_ms": t.latency_ms,
                "customer_marks": marks.get((t.index, "customer"), [])
                + marks.get((None, "customer"), []),
                "reply_marks": marks.get((t.index, "reply"), []) + marks.get((None, "reply"), []),
            }
        )
    facts = blueprint.persona.facts if blueprint else {}
    today = blueprint.reference_date if blueprint else None
    fields = []
    for spec in manifest.intake_fields if manifest else []:
        truth = facts.get(spec.key, "")
        got, at = extracted.get(spec.key, (None, None))
        fields.append(
            {
                "key": spec.key,
                "label": spec.label,
                "kind": spec.kind,
                "required": spec.required,
                "persona": truth or None,
                "extracted": got,
                "extracted_turn": at,
                "match": (
                    None if not truth or got is None else values_match(spec.kind, got, truth, today)
                ),
            }
        )
    known = {f["key"] for f in fields}
    fields += [
        {
            "key": key,
            "label": key,
            "kind": None,
            "required": False,
            "persona": facts.get(key) or None,
            "extracted": extracted.get(key, (None, None))[0],
            "extracted_turn": extracted.get(key, (None, None))[1],
            "match": None,
        }
        for key in sorted((set(facts) | set(extracted)) - known)
    ]
    promotion = None
    if fixture_row is not None:
        promotion = (
            PromotedFixture.objects.filter(
                organization_id=run.organization_id, fixture_sha256=fixture_row.sha256
            )
            .select_related("promoted_by")
            .first()
        )
    return {
        "case": case,
        "blueprint": blueprint,
        "turns": turn_rows,
        "fields": fields,
        "findings": [
            {"finding": f, "triage": (history[f.id] or [None])[0], "history": history[f.id]}
            for f in findings
        ],
        "fixture": fixture,
        "fixture_artifact": fixture_row,
        "fixture_marks": fixture_marks,
        "promotion": promotion,
    }


# --------------------------------------------------------------------------- trends


def run_score_trends(*, runs: QuerySet[Run], points: int = 20) -> list[dict[str, Any]]:
    """The overall score of the last `points` scored runs per organization + preset, oldest
    first, with an SVG polyline (100 x 24 box) for the sparkline. One query."""
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    rows = (
        runs.filter(score_overall__isnull=False, locked_at__isnull=False)
        .order_by("-id")
        .values_list("organization__name", "preset", "id", "score_overall")[:2000]
    )
    for org, preset, run_id, score in rows:
        bucket = series.setdefault((org, preset), [])
        if len(bucket) < points:
            bucket.append((run_id, score))
    trends = []
    for (org, preset), values in sorted(series.items()):
        values.reverse()
        step = 100 / max(1, len(values) - 1)
        polyline = " ".join(
            f"{i * step:.1f},{22 - 20 * score:.1f}" for i, (_, score) in enumerate(values)
        )
        trends.append(
            {
                "organization": org,
                "preset": preset,
                "runs": [run_id for run_id, _ in values],
                "scores": [score for _, score in values],
                "last": values[-1][1],
                "change": round(values[-1][1] - values[-2][1], 4) if len(values) > 1 else None,
                "polyline": polyline,
            }
        )
    return trends
