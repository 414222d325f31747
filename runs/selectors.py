"""Reads of runs: the report of DESIGN §11, the delta, and what the pages list."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import Count, Prefetch, Q, QuerySet, Sum
from django.utils import timezone

from judge.schemas import CaseJudgement, CaseScores
from qalab.llm.base import ROLES
from runs.models import (
    CaseStatus,
    FindingTriage,
    LlmCall,
    PromotedFixture,
    Run,
    RunArtifact,
    RunCase,
    RunFinding,
    RunStatus,
    RunTurn,
    TriageState,
)

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


def _triage_dict(t: FindingTriage | None) -> dict[str, Any]:
    if t is None:
        return {"state": TriageState.OPEN.value, "note": "", "reviewer": None, "at": None}
    return {
        "state": t.state,
        "note": t.note,
        "reviewer": t.reviewer.get_username() if t.reviewer else None,
        "at": t.created_at.isoformat(),
    }


def run_triage_latest(*, run: Run) -> dict[int, FindingTriage]:
    """The current triage decision of each triaged finding of the run (newest row wins)."""
    latest: dict[int, FindingTriage] = {}
    rows = FindingTriage.objects.filter(run=run).select_related("reviewer").order_by("-id")
    for row in rows:
        latest.setdefault(row.finding_id, row)
    return latest


def triage_counts(findings: list[dict[str, Any]]) -> dict[str, int]:
    """How many findings are in each triage state (findings never triaged are `open`)."""
    counts = Counter(f["triage"]["state"] for f in findings)
    return {state: counts.get(state, 0) for state in TriageState.values}


def _finding_dict(f: RunFinding, triage: FindingTriage | None = None) -> dict[str, Any]:
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
        "corroborating": f.corroborating,
        "triage": _triage_dict(triage),
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
    triage = run_triage_latest(run=run)
    finding_dicts = [_finding_dict(f, triage.get(f.id)) for f in findings]
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
            "triage": triage_counts(finding_dicts),
        },
        "findings": finding_dicts,
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


def _delta_items(findings: list[RunFinding]) -> dict[str, dict[str, Any]]:
    """One entry per fingerprint: the first (most severe) finding that carries it, and a count."""
    items: dict[str, dict[str, Any]] = {}
    for f in sorted(findings, key=_severity_sort_key):
        item = items.get(f.fingerprint)
        if item:
            item["count"] += 1
            continue
        items[f.fingerprint] = {
            "fingerprint": f.fingerprint,
            "finding_id": f.id,
            "rule_id": f.rule_id,
            "severity": f.severity,
            "case": f.case.scenario_key if f.case else None,
            "subject": f.subject,
            "count": 1,
        }
    return items


def _changed_keys(now: dict[str, Any], then: dict[str, Any]) -> list[str]:
    return sorted(k for k in set(now) | set(then) if now.get(k) != then.get(k))


def _snapshot(run: Run) -> dict[str, Any]:
    return {
        "run_id": run.id,
        "responder": run.responder_spec,
        "engine": run.engine,
        "models": run.models_used,
        "settings_hash": run.settings_hash,
        "code_version": run.source.get("code_version"),
    }


def run_get_delta(*, run: Run, other: Run | None = None) -> dict[str, Any] | None:
    """Compare with `other` (default: the previous reported run of the same org and preset):
    verdict, scores per dimension, findings new / resolved / persisting by fingerprint, tokens,
    and which snapshot inputs changed. None when there is nothing to compare with."""
    base = other or run_get_previous(run=run)
    if base is None:
        return None
    now_items = _delta_items(list(run.findings.select_related("case")))
    then_items = _delta_items(list(base.findings.select_related("case")))
    new = [v for fp, v in now_items.items() if fp not in then_items]
    resolved = [v for fp, v in then_items.items() if fp not in now_items]
    persisting = [v for fp, v in now_items.items() if fp in then_items]

    def sev_counts(items: list[dict[str, Any]]) -> dict[str, int]:
        c = Counter(item["severity"] for item in items)
        return {s: c.get(s, 0) for s in SEVERITIES}

    def diff(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else round(a - b, 4)

    now_scores = _scores(
        run.score_groundedness, run.score_extraction, run.score_quality, run.score_overall
    )
    then_scores = _scores(
        base.score_groundedness, base.score_extraction, base.score_quality, base.score_overall
    )
    art = run.source.get("artifact_hashes")
    base_art = base.source.get("artifact_hashes")
    models_now, models_then = run.models_used or {}, base.models_used or {}
    return {
        "previous_run_id": base.id,
        # "previous": the previous reported run of the org and preset; "chosen": picked by hand.
        "basis": "chosen" if other is not None else "previous",
        "verdict": {
            "previous": base.verdict or None,
            "current": run.verdict or None,
            "changed": (base.verdict or None) != (run.verdict or None),
        },
        "scores": {k: diff(now_scores[k], then_scores[k]) for k in now_scores},
        "score_values": {
            k: {
                "previous": then_scores[k],
                "current": now_scores[k],
                "change": diff(now_scores[k], then_scores[k]),
            }
            for k in now_scores
        },
        "findings": {
            "new": sev_counts(new),
            "resolved": sev_counts(resolved),
            "persisting": sev_counts(persisting),
            "new_fingerprints": sorted(v["fingerprint"] for v in new),
            "resolved_fingerprints": sorted(v["fingerprint"] for v in resolved),
            "items": {"new": new, "resolved": resolved, "persisting": persisting},
        },
        "tokens": run.tokens_used - base.tokens_used,
        "token_values": {
            "previous": base.tokens_used,
            "current": run.tokens_used,
            "change": run.tokens_used - base.tokens_used,
        },
        "changed_inputs": {
            "responder": run.responder_spec != base.responder_spec,
            "org_context": run.source.get("org_context_sha256")
            != base.source.get("org_context_sha256"),
            "engine_or_models": (run.engine, run.models_used) != (base.engine, base.models_used),
            "settings": run.settings_hash != base.settings_hash,
            "test_set_identical": bool(art) and art == base_art,
            "engine": run.engine != base.engine,
            "models": _changed_keys(models_now, models_then),
            "kb_documents": _changed_keys(
                run.source.get("kb_documents") or {}, base.source.get("kb_documents") or {}
            ),
            "prompts": _changed_keys(
                run.source.get("prompts") or {}, base.source.get("prompts") or {}
            ),
            "code_version": run.source.get("code_version") != base.source.get("code_version"),
        },
        "snapshots": {"previous": _snapshot(base), "current": _snapshot(run)},
    }


def run_delta_candidates(*, run: Run, runs: QuerySet[Run], limit: int = 50) -> list[Run]:
    """Runs of the same organization a reviewer may compare this one with (newest first)."""
    return list(
        runs.filter(organization_id=run.organization_id, locked_at__isnull=False)
        .exclude(id=run.id)
        .select_related(None)
        .only("id", "preset", "verdict", "created_at", "responder_spec")
        .order_by("-id")[:limit]
    )


# --------------------------------------------------------------------------- progress and case


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None else round(((end or timezone.now()) - start).total_seconds(), 1)


def run_get_progress(*, run: Run) -> dict[str, Any]:
    """What the live progress shows: stage, cases done / total with per-case status, turns and
    elapsed time, tokens used vs budget. Two queries, whatever the run's size."""
    cases = list(
        RunCase.objects.filter(run=run)
        .order_by("scenario_key")
        .annotate(turn_count=Count("turns"))
        .only("scenario_key", "scenario_type", "status", "error", "started_at", "finished_at")
    )
    pending = (CaseStatus.QUEUED, CaseStatus.RUNNING)
    return {
        "status": run.status,
        "stage_detail": run.stage_detail,
        "cases": [
            {
                "id": c.scenario_key,
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
        },
    }


def _evidence_turn(evidence: dict[str, Any], finding: RunFinding) -> int | None:
    turn = evidence.get("turn")
    return finding.turn_index if turn is None else turn


def run_get_case(*, run: Run, case: RunCase) -> dict[str, Any]:
    """One case for the case view: turns with the quotes each finding cites in them, intake
    fields (persona value vs last extracted value), the fixture the responder saw, the case's
    findings with their triage history, and where the fixture was promoted, if it was."""
    from generator.schemas import Blueprint, Fixture, Manifest
    from judge.fields import values_match

    turns = list(case.turns.order_by("index"))
    findings = sorted(case.findings.all(), key=_severity_sort_key)
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
            Q(kind="blueprint", key=case.scenario_key)
            | Q(kind="fixture", key=case.fixture_key)
            | Q(kind="manifest")
        )
    }
    blueprint_row = artifacts.get(("blueprint", case.scenario_key))
    fixture_row = artifacts.get(("fixture", case.fixture_key))
    manifest_row = artifacts.get(("manifest", "manifest"))
    blueprint = Blueprint.model_validate_json(blueprint_row.content) if blueprint_row else None
    fixture = Fixture.model_validate_json(fixture_row.content) if fixture_row else None
    manifest = Manifest.model_validate_json(manifest_row.content) if manifest_row else None

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


# --------------------------------------------------------------------------- report page


def group_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings with the same severity and fingerprint (rule + subject: the same invented price
    in every reply, the same wrong hours in ten cases) as one group, in the report's order.

    Each group shows its first finding's evidence and fix, lists every occurrence (case, turn)
    and triages all its findings at once; its state is the common state or "mixed".
    """
    labels = dict(TriageState.choices)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for f in findings:
        key = (f["severity"], f["fingerprint"])
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"severity": f["severity"], "finding": f, "items": []}
        group["items"].append(f)
    for group in groups.values():
        items = group["items"]
        states = Counter(f["triage"]["state"] for f in items)
        group["ids"] = ",".join(str(f["id"]) for f in items)
        group["cases"] = sorted({f["case"] for f in items if f["case"]})
        if len(states) == 1:
            state = next(iter(states))
            group["state"], group["state_label"] = state, labels.get(state, state)
        else:
            group["state"] = "mixed"
            group["state_label"] = "mixed: " + ", ".join(
                f"{n} {labels.get(state, state).lower()}" for state, n in states.most_common()
            )
        group["notes"] = [f["triage"] for f in items if f["triage"]["note"]][:3]
    return list(groups.values())


def actions_with_groups(
    actions: list[dict[str, Any]], groups: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each top action with the finding groups it resolves (anchors on the report)."""
    group_of = {f["id"]: g for g in groups for f in g["items"]}
    out = []
    for action in actions:
        linked: list[dict[str, Any]] = []
        for finding_id in action["finding_ids"]:
            group = group_of.get(finding_id)
            if group is not None and group not in linked:
                linked.append(group)
        out.append({**action, "groups": linked})
    return out


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
