"""A compact Markdown summary of a run for a CI job page: `qalab_run` appends it to the file
`$GITHUB_STEP_SUMMARY` names (DESIGN §11). Verdict, counts, the first findings and actions, the
delta line; the full report stays in `--md`. Pure: reads the `RunReport`; untrusted text is
escaped as in the Markdown report."""

from __future__ import annotations

from runs.report.groups import report_groups
from runs.report.markdown import _md_escape, _pct, tokens_summary
from runs.report.schema import RunReport
from runs.report.trials import trials_line
from runs.report.words import delta_summary

TOP_FINDINGS = 5
_RATIONALE_CHARS = 200


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def report_to_step_summary(report: RunReport) -> str:
    """Verdict, counts, top findings, top actions and the delta, in a few lines of Markdown."""
    lines: list[str] = []
    add = lines.append
    s, f = report.summary, report.summary.findings
    add(f"### AI QA Lab: run {report.run_id} · `{report.organization}` · `{report.preset}`")
    add("")
    if report.verdict:
        add(
            f"**Verdict: {report.verdict}**"
            + (f" — {_md_escape(report.verdict_reason)}" if report.verdict_reason else "")
        )
    elif report.in_progress:  # still going when --wait gave up
        p = report.in_progress
        add(f"**No verdict: in progress** ({p.stage}, {p.cases_done}/{p.cases_total} cases)")
    else:  # errored or cancelled
        add(f"**No verdict** (status `{report.status}`)")
    if report.bot_not_called:
        add("")
        add(f"> **{_md_escape(report.bot_not_called)}**")
    if report.error:
        add("")
        add(f"> Run error: {_md_escape(_short(report.error, 300))}")
    add("")
    add(
        f"Responder `{_md_escape(report.responder)}` · engine `{report.engine}` · seed "
        f"{report.seed} · cases {s.cases}: completed {s.completed}, passed {s.passed}, errored "
        f"{s.errored}, skipped (budget) {s.skipped_budget} · findings {f.critical} critical, "
        f"{f.major} major, {f.minor} minor · overall {_pct(report.scores.overall)} · "
        f"{tokens_summary(report.tokens)}"
    )
    if report.trials:
        add("")
        add(f"Trials: {report.trials.k} per scenario · {trials_line(report.trials)}")
    grouped = report_groups(report)  # one entry per issue, as the report lists them
    if grouped:
        add("")
        add("**Top findings**")
        add("")
        for group, items in grouped[:TOP_FINDINGS]:
            finding = items[0]
            where = "run-wide" if finding.case is None else f"case {finding.case}"
            if finding.turn is not None:
                where += f", turn {finding.turn}"
            add(
                f"- **{group.severity.upper()}** `{finding.rule_id}`"
                + (f" ×{group.count}" if group.count > 1 else "")
                + f" — {where}: {_md_escape(_short(finding.rationale, _RATIONALE_CHARS))}"
            )
        if len(grouped) > TOP_FINDINGS:
            add(f"- … and {len(grouped) - TOP_FINDINGS} more issues in the full report")
    if report.top_actions:
        add("")
        add("**Top actions**")
        add("")
        for action in report.top_actions:
            add(
                f"{action.rank}. **{_md_escape(action.title)}** ({action.target_layer}, effort "
                f"{action.effort})"
            )
    add("")
    add(f"**Delta:** {_md_escape(delta_summary(report))}")
    add("")
    return "\n".join(lines)
