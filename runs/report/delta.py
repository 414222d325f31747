"""The delta of a run against an earlier one (DESIGN §10): verdict, scores, findings new,
resolved, persisting and not played by fingerprint, tokens, and which snapshot inputs changed.
The default baseline compares like with like: same organization, preset and responder, a real
bot's run."""

from __future__ import annotations

from collections import Counter

from judge.significance import Outcome, over_trials, paired_change
from runs.models import CaseStatus, Run, RunCase, RunFinding, RunStatus
from runs.report.parts import rounded_scores, severity_counts, severity_sort_key
from runs.report.schema import (
    ChangedInputs,
    DeltaFindings,
    DeltaItem,
    DeltaItems,
    RunDelta,
    ScoreChange,
    ScoreChanges,
    Scores,
    Significance,
    Snapshot,
    Snapshots,
    TokenChange,
    VerdictChange,
)
from runs.report.words import baseline_scope

# Config keys that are not settings: the seed, the reference date and the reused run's id
# decide the test set (test_set_identical says whether it changed); responder, engine and
# models are named apart.
NOT_SETTINGS = frozenset({"seed", "as_of", "reuse_artifacts", "responder", "engine", "models"})


def run_get_previous(*, run: Run) -> Run | None:
    """The default baseline: the latest final run before this one of the same organization,
    preset and responder spec that has a verdict (errored and cancelled runs have none), the
    lab's own runs (selftest, canary) left out. None when there is none: never a run of another
    responder. One of the lab's own runs has no default baseline."""
    if run.probe:
        return None
    return (
        Run.objects.of_real_bots()
        .filter(
            organization_id=run.organization_id,
            preset=run.preset,
            responder_spec=run.responder_spec,
            id__lt=run.id,
            locked_at__isnull=False,
        )
        .exclude(verdict="")
        .exclude(status__in=(RunStatus.ERROR, RunStatus.CANCELLED))
        .order_by("-id")
        .first()
    )


def _delta_items(findings: list[RunFinding]) -> dict[str, DeltaItem]:
    """One entry per fingerprint: the first (most severe) finding that carries it, and a count."""
    first: dict[str, RunFinding] = {}
    counts: Counter[str] = Counter()
    for f in sorted(findings, key=severity_sort_key):
        first.setdefault(f.fingerprint, f)
        counts[f.fingerprint] += 1
    return {
        fp: DeltaItem(
            fingerprint=f.fingerprint,
            finding_id=f.id,
            rule_id=f.rule_id,
            severity=f.severity,
            case=f.case.key if f.case else None,
            subject=f.subject,
            count=counts[fp],
        )
        for fp, f in first.items()
    }


def not_played(*, run: Run, base_findings: list[RunFinding]) -> set[str]:
    """Fingerprints of `base_findings` that `run` had no chance to find again, so their absence
    says nothing: every case they were found in is one `run` did not play and judge (cancelled,
    skipped on budget, errored or still pending). A run without a verdict judged nothing (it
    was cancelled, errored, or is still working): none of its cases counts as played. A case
    `run` does not hold at all (another test set) leaves the finding to `resolved`, as before;
    a finding of no case is not played while any case of `run` is."""
    cases = list(run.cases.values_list("scenario_key", "status"))
    played = {key for key, status in cases if status == CaseStatus.DONE and run.verdict}
    unplayed = {key for key, _ in cases} - played
    where: dict[str, set[str | None]] = {}
    for f in base_findings:
        where.setdefault(f.fingerprint, set()).add(f.case.scenario_key if f.case else None)
    out = set()
    for fingerprint, keys in where.items():
        if keys & played:
            continue
        if keys & unplayed or (None in keys and unplayed):
            out.add(fingerprint)
    return out


def _changed_keys(now: dict[str, object], then: dict[str, object]) -> list[str]:
    return sorted(k for k in set(now) | set(then) if now.get(k) != then.get(k))


def settings_changed(now: dict[str, object], then: dict[str, object]) -> list[str]:
    """Config keys whose value differs, other than the seed, the reused run's id and the
    inputs named apart (responder, engine, models). Not the settings hash: that covers them.
    The semantic layer's are named finer when both runs had it: `semantic.<key>`, and a
    threshold by its rule (`semantic.confirm_thresholds.self_contradiction`: an organization's
    re-fitted confirm threshold)."""
    out: list[str] = []
    for key in _changed_keys(now, then):
        if key in NOT_SETTINGS:
            continue
        a, b = now.get(key), then.get(key)
        out += _semantic_changed(a, b) if key == "semantic" else [key]
    return out


# The semantic layer's per-rule thresholds: a change is named by its rule.
_PER_RULE = ("thresholds", "confirm_thresholds")


def _semantic_changed(now: object, then: object) -> list[str]:
    if not (isinstance(now, dict) and isinstance(then, dict)):
        return ["semantic"]
    out: list[str] = []
    for key in _changed_keys(now, then):
        a, b = now.get(key) or {}, then.get(key) or {}
        if key in _PER_RULE and isinstance(a, dict) and isinstance(b, dict):
            out += [f"semantic.{key}.{rule}" for rule in _changed_keys(a, b)]
        else:
            out.append(f"semantic.{key}")
    return out


def _outcomes(*runs: Run) -> list[dict[str, Outcome]]:
    """Each run's judged cases' overall score and pass/fail, by scenario over its trials
    (`over_trials`: the mean score, passed when every trial passed); one query."""
    rows = RunCase.objects.filter(run__in=runs, status=CaseStatus.DONE).values_list(
        "run_id", "scenario_key", "score_overall", "passed"
    )
    trials: dict[int, dict[str, list[Outcome]]] = {run.id: {} for run in runs}
    for run_id, key, score, passed in rows:
        trials[run_id].setdefault(key, []).append(Outcome(score=score, passed=passed))
    return [
        {key: over_trials(outcomes) for key, outcomes in trials[run.id].items()} for run in runs
    ]


def significance(*, run: Run, base: Run, same_test_set: bool) -> Significance:
    """The paired test of `run` against `base` on the same test set (`judge.significance`);
    on different test sets, no test and a note saying why."""
    if not same_test_set:
        return Significance(
            paired=False,
            note="not paired: the runs played different test sets, so a change in score may "
            "come from the scenarios as much as from the bot; no significance test",
            scenarios=0,
            change=None,
            mean_score_change=None,
            interval=None,
            resamples=0,
            p_value=None,
            to_fail=[],
            to_pass=[],
        )
    result = paired_change(*_outcomes(base, run))
    low_high = [round(v, 4) for v in result.interval] if result.interval else None
    return Significance(
        paired=True,
        note=(
            f"paired over the {result.scenarios} scenarios both runs played: overall-score "
            f"change with a {result.resamples:,}-resample bootstrap interval, exact McNemar "
            "test on pass/fail flips"
        ),
        scenarios=result.scenarios,
        change=result.change,
        mean_score_change=None if result.mean_change is None else round(result.mean_change, 4),
        interval=low_high,
        resamples=result.resamples,
        p_value=round(result.p_value, 4),
        to_fail=result.to_fail,
        to_pass=result.to_pass,
    )


def _snapshot(run: Run) -> Snapshot:
    return Snapshot(
        run_id=run.id,
        responder=run.responder_spec,
        engine=run.engine,
        models=run.models_used,
        settings_hash=run.settings_hash,
        code_version=run.source.get("code_version"),
    )


def delta_build(*, run: Run, other: Run | None = None) -> RunDelta | None:
    """Compare with `other` (default: `run_get_previous`, the latest final run of the same org,
    preset and responder): verdict, scores per dimension, findings new / resolved / persisting
    by fingerprint (a finding gone only because its cases were not played is `not_played`, never
    resolved), tokens, and which snapshot inputs changed. None when there is nothing to compare
    with."""
    base = other or run_get_previous(run=run)
    if base is None:
        return None
    scope = baseline_scope(org_slug=run.org_slug, preset=run.preset, responder=run.responder_spec)
    now_items = _delta_items(list(run.findings.select_related("case")))
    base_findings = list(base.findings.select_related("case"))
    then_items = _delta_items(base_findings)
    new = [v for fp, v in now_items.items() if fp not in then_items]
    gone = [v for fp, v in then_items.items() if fp not in now_items]
    unplayed = not_played(run=run, base_findings=base_findings)
    resolved = [v for v in gone if v.fingerprint not in unplayed]
    skipped = [v for v in gone if v.fingerprint in unplayed]
    persisting = [v for fp, v in now_items.items() if fp in then_items]

    def diff(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else round(a - b, 4)

    now_scores = rounded_scores(
        run.score_groundedness, run.score_extraction, run.score_quality, run.score_overall
    )
    then_scores = rounded_scores(
        base.score_groundedness, base.score_extraction, base.score_quality, base.score_overall
    )
    dimensions = list(Scores.model_fields)
    now_by, then_by = now_scores.model_dump(), then_scores.model_dump()
    art = run.source.get("artifact_hashes")
    base_art = base.source.get("artifact_hashes")
    models_now, models_then = run.models_used or {}, base.models_used or {}
    config_changed = settings_changed(run.config or {}, base.config or {})
    return RunDelta(
        previous_run_id=base.id,
        basis="chosen" if other is not None else "previous",
        basis_reason="chosen by the reviewer"
        if other is not None
        else f"latest final run of {scope}",
        verdict=VerdictChange(
            previous=base.verdict or None,
            current=run.verdict or None,
            changed=(base.verdict or None) != (run.verdict or None),
        ),
        scores=Scores(**{k: diff(now_by[k], then_by[k]) for k in dimensions}),
        score_values=ScoreChanges(
            **{
                k: ScoreChange(
                    previous=then_by[k], current=now_by[k], change=diff(now_by[k], then_by[k])
                )
                for k in dimensions
            }
        ),
        findings=DeltaFindings(
            new=severity_counts(v.severity for v in new),
            resolved=severity_counts(v.severity for v in resolved),
            persisting=severity_counts(v.severity for v in persisting),
            not_played=severity_counts(v.severity for v in skipped),
            new_fingerprints=sorted(v.fingerprint for v in new),
            resolved_fingerprints=sorted(v.fingerprint for v in resolved),
            not_played_fingerprints=sorted(v.fingerprint for v in skipped),
            items=DeltaItems(new=new, resolved=resolved, persisting=persisting, not_played=skipped),
        ),
        tokens=run.tokens_used - base.tokens_used,
        token_values=TokenChange(
            previous=base.tokens_used,
            current=run.tokens_used,
            change=run.tokens_used - base.tokens_used,
        ),
        changed_inputs=ChangedInputs(
            responder=run.responder_spec != base.responder_spec,
            org_context=run.source.get("org_context_sha256")
            != base.source.get("org_context_sha256"),
            engine_or_models=(run.engine, run.models_used) != (base.engine, base.models_used),
            settings=bool(config_changed),
            settings_changed=config_changed,
            test_set_identical=bool(art) and art == base_art,
            engine=run.engine != base.engine,
            models=_changed_keys(models_now, models_then),
            kb_documents=_changed_keys(
                run.source.get("kb_documents") or {}, base.source.get("kb_documents") or {}
            ),
            prompts=_changed_keys(
                run.source.get("prompts") or {}, base.source.get("prompts") or {}
            ),
            code_version=run.source.get("code_version") != base.source.get("code_version"),
        ),
        significance=significance(run=run, base=base, same_test_set=bool(art) and art == base_art),
        snapshots=Snapshots(previous=_snapshot(base), current=_snapshot(run)),
    )
