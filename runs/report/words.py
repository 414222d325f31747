"""Words shared by the delta, the Markdown, the CLI and the pages: which run the delta compares
with and why, the test set, each input that changed, the corrected counts, and a share as a
percentage (`share_pct`). Pure: no Django."""

from __future__ import annotations

from runs.report.schema import CorrectedCounts, RunDelta, RunReport


def baseline_scope(*, org_slug: str, preset: str, responder: str) -> str:
    """The runs a default baseline is taken from, in words: 'demo · quick · responder X'."""
    return f"{org_slug} · {preset} · responder {responder}"


def lab_run_no_baseline(*, run_id: int, probe: str) -> str:
    """Why one of the lab's own runs (selftest, canary, stand-in) has no default delta, in
    sentences of its own ("" for a real bot's run, `probe` "")."""
    if not probe:
        return ""
    return (
        f"Run #{run_id} is a {probe} run, one of the lab's own: it tests the lab, not a bot. "
        "The lab's own runs (selftest, canary, stand-in) never have a default baseline and are "
        "never one, so there is no delta unless you pick a run to compare with."
    )


def report_no_baseline(report: RunReport) -> str:
    """Why the report has no delta: one of the lab's own runs, or nothing of its kind yet."""
    return lab_run_no_baseline(run_id=report.run_id, probe=report.probe) or no_baseline_text(
        org_slug=report.organization, preset=report.preset, responder=report.responder
    )


def no_baseline_text(*, org_slug: str, preset: str, responder: str) -> str:
    """Why a run has no delta: nothing of its kind to compare with."""
    scope = baseline_scope(org_slug=org_slug, preset=preset, responder=responder)
    return (
        f"No earlier final run of {scope} to compare with (runs of another responder, the "
        "lab's own selftest and canary runs, and errored or cancelled runs are not baselines)."
    )


def delta_changes(delta: RunDelta) -> list[str]:
    """Each input that changed between the two runs, named (the test set is said apart)."""
    c, before, after = delta.changed_inputs, delta.snapshots.previous, delta.snapshots.current
    out = []
    if c.responder:
        out.append(f"responder {before.responder} → {after.responder}")
    if c.engine:
        out.append(f"engine {before.engine} → {after.engine}")
    if c.models:
        out.append("models of " + ", ".join(c.models))
    if c.org_context or c.kb_documents:
        docs = f" (KB documents {', '.join(c.kb_documents)})" if c.kb_documents else ""
        out.append("org context" + docs)
    if c.prompts:
        out.append("prompts " + ", ".join(c.prompts))
    if c.settings_changed:
        out.append("settings " + ", ".join(c.settings_changed))
    if c.code_version:
        out.append("code version")
    return out


def delta_test_set(delta: RunDelta) -> str:
    """'same test set' or 'test set different' (fixtures, manifest, scenarios)."""
    return "same test set" if delta.changed_inputs.test_set_identical else "test set different"


def delta_significance(delta: RunDelta) -> str:
    """The paired test in words: 'regressed (6 to fail, 0 to pass, p = 0.031; overall -25.0 pts
    a scenario, 95% interval -37.5 to -12.5)', or why there is no test."""
    s = delta.significance
    if not s.paired or s.change is None:
        return "not paired (different test sets): no significance test"
    figures = f"{len(s.to_fail)} to fail, {len(s.to_pass)} to pass, McNemar p = {s.p_value:.3f}"
    if s.mean_score_change is not None and s.interval:
        low, high = (v * 100 for v in s.interval)
        figures += (
            f"; overall {s.mean_score_change * 100:+.1f} pts a scenario, 95% interval "
            f"{low:+.1f} to {high:+.1f}"
        )
    return f"{s.change} ({figures}; {s.scenarios} paired scenarios)"


def delta_summary(report: RunReport) -> str:
    """The delta in one plain line (the CLI prints it): which run, why, the test set, the
    verdict, the overall score, the findings and what changed; or why there is none."""
    d = report.delta
    if d is None:
        return report_no_baseline(report)
    overall = d.scores.overall
    changes = delta_changes(d)
    return (
        f"vs run {d.previous_run_id} ({d.basis_reason}): {delta_test_set(d)} · "
        f"{delta_significance(d)} · verdict "
        f"{d.verdict.previous} -> {d.verdict.current} · overall "
        + ("n/a" if overall is None else f"{overall * 100:+.1f} pts")
        + f" · findings {d.findings.new.total} new, {d.findings.resolved.total} resolved"
        + (f", {d.findings.not_played.total} not played" if d.findings.not_played.total else "")
        + " · "
        + ("changed: " + "; ".join(changes) if changes else "no other input changed")
    )


def corrected_line(corrected: CorrectedCounts | None) -> str:
    """'Corrected by your reviewers' labels: critical about 1.6 (95%: 0.9-2.0) of 2 reported,
    on 24 labels; major: no estimate: ...' ('' when there is nothing to say)."""
    if corrected is None:
        return ""
    counts = (corrected.critical, corrected.major)
    if all(c.estimate is None and c.labels == 0 for c in counts) and any(
        c.reported for c in counts
    ):
        return (
            "No corrected counts yet: the organization's reviewers have labelled no finding of "
            f"these rules (a rule needs {corrected.min_labels} decisions made by hand)"
        )
    parts = []
    for c in counts:
        if c.reported == 0:
            continue
        if c.estimate is None:
            parts.append(f"{c.severity} {c.note}")
        else:
            parts.append(
                f"{c.severity} about {c.estimate:g} (95%: {c.low:g}–{c.high:g}) of "
                f"{c.reported} reported, on {c.labels} labels"
            )
    return ("Corrected by your reviewers' labels: " + "; ".join(parts)) if parts else ""


def share_pct(value: float | None) -> str:
    """A share as a whole percentage that never rounds up to 100% (or down to 0%) unless it
    is exactly that."""
    if value is None:
        return "n/a"
    pct = round(value * 100)
    if pct == 100 and value < 1:
        pct = 99
    elif pct == 0 and value > 0:
        pct = 1
    return f"{pct}%"
