"""The Markdown report, rendered from the `RunReport` (DESIGN §11)."""

from __future__ import annotations

from collections import Counter

from qalab.domain import SEVERITIES
from runs.report.groups import report_groups
from runs.report.schema import Finding, RunReport, Tokens
from runs.report.trials import flaky_text, trials_line, yes_no
from runs.report.words import (
    corrected_line,
    delta_changes,
    delta_significance,
    delta_test_set,
    report_no_baseline,
)

_PCT_KEYS = ("groundedness", "extraction_accuracy", "conversation_quality", "overall")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _md_escape(text: str) -> str:
    """Keep untrusted text from breaking tables or injecting markup: no table cell breaks, no
    HTML, and no link or image (`[x](javascript:...)`): its brackets are escaped."""
    return (
        str(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("[", "\\[")
        .replace("]", "\\]")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\n", " ")
    )


def bot_metered(t: Tokens) -> bool:
    """Whether the run metered the bot's own calls against their own budget (shown apart)."""
    return t.responder_metered and t.responder_budget > 0


def tokens_summary(t: Tokens) -> str:
    """'tokens 29,794/50,000 · bot 8,071/50,000': the lab's roles, then the bot when the lab
    ran it; '(estimated)' when the offline engine metered them."""
    bot = f" · bot {t.responder_used:,}/{t.responder_budget:,}" if bot_metered(t) else ""
    return f"tokens {t.used:,}/{t.budget:,}{bot}" + (" (estimated)" if t.estimated else "")


def fallback_summary(report: RunReport) -> str:
    """LLM tasks the offline implementation did instead of the model, by role ("" for none)."""
    t = report.tokens
    if not t.fallbacks_by_role:
        return ""
    count = sum(t.fallbacks_by_role.values())
    roles = ", ".join(f"{role} {n}" for role, n in t.fallbacks_by_role.items())
    share = f"; {t.fallback_share:.0%} of the LLM tasks" if t.fallback_share is not None else ""
    return (
        f"{count} LLM task(s) done by the offline implementation instead of the model "
        f"({roles}{share})"
    )


def _interruptions(report: RunReport) -> list[str]:
    """Work a lost worker left behind, said where a reader of the summary sees it."""
    lines = [
        f"> Interrupted: case {case.id}: attempt {i.attempt} resumed after turn {i.after_turn} "
        f"({_md_escape(i.reason)})."
        for case in report.cases
        for i in case.interruptions
    ]
    if report.tokens.orphaned:
        lines.append(
            f"> Interrupted: {report.tokens.orphaned} token reservation(s) left open by a lost "
            "worker were charged in full."
        )
    return ["", *lines] if lines else []


def judge_limit_notes(report: RunReport) -> list[str]:
    """One note per case the judge did not read whole or finish (issue 33): the turns it read
    in part and the checks its judging deadline skipped; none for a case judged in full."""
    notes: list[str] = []
    for case in report.cases:
        if not case.judge_limited:
            continue
        parts: list[str] = []
        if case.truncated_turns:
            turns = ", ".join(str(t) for t in case.truncated_turns)
            parts.append(
                f"turn{'s' if len(case.truncated_turns) != 1 else ''} {turns} judged on "
                "the first QALAB_JUDGE_MAX_CHARS characters of each text"
            )
        if case.skipped_checks:
            parts.append(
                "not checked by the judging deadline (QALAB_JUDGE_DEADLINE_S): "
                + ", ".join(case.skipped_checks)
            )
        notes.append(f"case {case.id}: " + "; ".join(parts))
    return notes


def judge_limits_summary(report: RunReport) -> str:
    """The judge limits of every case in one line ("" when every case was judged whole)."""
    return " · ".join(judge_limit_notes(report))


def _judge_limits(report: RunReport) -> list[str]:
    return (
        ["", *(f"> Judge limits: {_md_escape(n)}." for n in notes)]
        if (notes := judge_limit_notes(report))
        else []
    )


_STATE_WORDS = {"false_positive": "false positive", "wont_fix": "won't fix"}


def _carry_line(report: RunReport) -> str:
    """New / carried / resolved: what the triage of earlier runs says about this one."""
    c = report.summary.carry
    resolved = (
        f"resolved {c.resolved} (triaged in run {c.baseline_run_id}, gone now)"
        if c.baseline_run_id is not None
        else "resolved 0 (no baseline run)"
    )
    return (
        f"Triage: new {c.new} · carried {c.carried} (decided in an earlier run) · {resolved}"
        + (
            f" · {c.gate_waived} critical waived by a carried decision (not failing the gate)"
            if c.gate_waived
            else ""
        )
        + "."
    )


def unsupported_line(report: RunReport) -> str:
    """How many findings the evidence check dropped, by rule (or that it dropped none)."""
    s = report.summary
    n = s.unsupported_findings
    if not n:
        return "Evidence check: every finding's quotes are verbatim in the transcript or KB."
    rules = ", ".join(f"{rule} {k}" for rule, k in s.unsupported_by_rule.items())
    return (
        f"{n} finding{'s' if n != 1 else ''} dropped: {'its' if n == 1 else 'their'} quotes "
        f"{'was' if n == 1 else 'were'} not in the transcript or KB"
        + (f" ({_md_escape(rules)})" if rules else "")
        + "."
    )


def _group_triage(items: list[Finding]) -> str:
    """The triage line of a group: its findings' common decision, or how they are split."""
    states = Counter(f.triage.state for f in items)
    if len(states) > 1:
        split = ", ".join(f"{n} {_STATE_WORDS.get(st, st)}" for st, n in states.most_common())
        return f"  - Triage: mixed: {split}"
    t = items[0].triage
    if t.state == "open" and t.carried_from is None:
        return ""
    return (
        f"  - Triage: {_STATE_WORDS.get(t.state, t.state)}"
        + (f" by {_md_escape(t.reviewer)}" if t.reviewer else "")
        + (f", carried from run {t.carried_from}" if t.carried_from is not None else "")
        + (" (does not fail the gate)" if t.gate_waived else "")
        + (f": {_md_escape(t.note)}" if t.note else "")
    )


def _findings(report: RunReport) -> list[str]:
    """One bullet per finding group, as the report page lists them (`runs.report.groups`):
    a severity heading with its number of issues, then each issue with its count."""
    lines: list[str] = []
    grouped = report_groups(report)
    for severity in SEVERITIES:
        of_severity = [(g, items) for g, items in grouped if g.severity == severity]
        if not of_severity:
            continue
        n = len(of_severity)
        lines += [f"### {severity.capitalize()} ({n} issue{'s' if n != 1 else ''})", ""]
        for group, items in of_severity:
            finding = items[0]
            where = f"case {finding.case}" if finding.case else "run-wide"
            lines.append(
                f"- **{severity.upper()}** `{finding.rule_id}`"
                + (f" ×{group.count}" if group.count > 1 else "")
                + f" — {where}"
                + (f", turn {finding.turn}" if finding.turn is not None else "")
                + f": {_md_escape(finding.rationale)}"
                + (f" (also: {', '.join(finding.corroborating)})" if finding.corroborating else "")
            )
            for ev in finding.evidence:
                turn = "" if ev.turn is None else f", turn {ev.turn}"
                lines.append(f"  - {ev.source}{turn}: “{_md_escape(ev.quote)}”")
            lines.append(
                f"  - Fix ({finding.fix.target}, effort {finding.effort}, confidence "
                f"{finding.confidence:.2f}): {_md_escape(finding.fix.text)}"
            )
            if flaky := flaky_text(group):
                lines.append(f"  - {flaky}")
            if group.count > 1:
                cases = len(group.cases)
                occurrences = ", ".join(
                    (f.case or "run") + ("" if f.turn is None else f" turn {f.turn}") for f in items
                )
                lines.append(
                    f"  - {group.count} occurrences in {cases} case{'s' if cases != 1 else ''}: "
                    f"{occurrences}"
                )
            if triage := _group_triage(items):
                lines.append(triage)
        lines.append("")
    return lines


def missed_verdict_line(report: RunReport) -> str:
    """What the verdict would have been with the misses reviewers added ("" without any)."""
    if (would := report.verdict_with_missed) is None:
        return ""
    if would == report.verdict:
        return f"With the misses reviewers added, the verdict would still be {would}."
    return (
        f"With the misses reviewers added, the verdict would have been {would} (it stays "
        f"{report.verdict}: a miss added by hand never changes a run's verdict)."
    )


def _missed(report: RunReport) -> list[str]:
    """The defects the judge missed that reviewers added (issue 36): apart from the findings."""
    if not (misses := report.missed_findings):
        return []
    n = len(misses)
    lines = [f"### Added by reviewers ({n} missed by the judge, not in the verdict)", ""]
    if verdict := missed_verdict_line(report):
        lines += [verdict, ""]
    for m in misses:
        who = f"added by {_md_escape(m.reviewer or 'a reviewer')}" + (
            f", carried from run {m.carried_from}" if m.carried_from is not None else ""
        )
        lines.append(
            f"- **{m.severity.upper()}** `{_md_escape(m.rule_id)}`"
            + (f" ({_md_escape(m.other_text)})" if m.other_text else "")
            + f" — case {_md_escape(m.case)}, turn {m.turn}: “{_md_escape(m.quote)}” ({who})"
            + (f": {_md_escape(m.note)}" if m.note else "")
        )
    return [*lines, ""]


def _trials(report: RunReport) -> list[str]:
    """A run of several trials: its pass rate, pass^k and pass@k, and each scenario's."""
    if (trials := report.trials) is None:
        return []
    k = trials.k
    lines = ["", f"## Trials: {k} per scenario", "", trials_line(trials).capitalize() + ".", ""]
    lines += [f"| scenario | passed | pass^{k} | pass@{k} | |", "|---|---|---|---|---|"]
    for s in trials.scenarios:
        lines.append(
            f"| {_md_escape(s.scenario_key)} | {s.passed} of {s.played} | {yes_no(s.pass_all)} "
            f"| {yes_no(s.pass_any)} | {'flaky' if s.flaky else ''} |"
        )
    return lines


def report_to_markdown(report: RunReport) -> str:
    """Findings-first Markdown (seed 003 §6 order): verdict, findings, top actions, scores, tokens."""
    lines: list[str] = []
    add = lines.append
    add(f"# AI QA Lab report: run {report.run_id}")
    add("")
    progress = report.in_progress
    if progress:
        # Never a verdict, nor "No findings", for a run that is still going.
        add(
            f"**In progress: {progress.stage}, {progress.cases_done}/{progress.cases_total} cases**"
        )
        add("")
        add(f"> {_md_escape(progress.note)}.")
    else:
        add(
            f"**Verdict: {report.verdict or report.status.upper()}**"
            + (f" — {_md_escape(report.verdict_reason)}" if report.verdict_reason else "")
        )
    add("")
    add(
        f"Organization `{report.organization}` · preset `{report.preset}` · status "
        f"`{report.status}` · engine `{report.engine}` · responder `{_md_escape(report.responder)}` · "
        f"seed {report.seed} · as of {report.as_of} · settings `{report.settings_hash[:12]}` · "
        f"judge layers: {', '.join(report.judge_layers)}"
    )
    if report.bot_not_called:
        add("")
        add(f"> **{_md_escape(report.bot_not_called)}**")
    if report.error:
        add("")
        add(f"> Run error: {_md_escape(report.error)}")
    s = report.summary
    add("")
    add(
        f"Cases: {s.cases} · completed {s.completed} · passed {s.passed} · errored "
        f"{s.errored} · skipped (budget) {s.skipped_budget}"
        + (f" · interrupted {s.interrupted}" if s.interrupted else "")
    )
    lines += _interruptions(report)
    lines += _judge_limits(report)
    lines += _trials(report)
    if fallback := fallback_summary(report):
        add("")
        add(f"> Fallbacks: {fallback}.")
    f = s.findings
    add("")
    add(f"## Findings ({f.critical} critical, {f.major} major, {f.minor} minor)")
    add("")
    if corrected := corrected_line(report.corrected):
        add(_md_escape(corrected) + ".")
        add("")
    add(_carry_line(report))
    add("")
    add(unsupported_line(report))
    add("")
    if not report.findings:
        add("Not judged yet." if progress else "No findings.")
        add("")
    lines += _findings(report)  # each severity's list ends with a blank line
    lines += _missed(report)
    add("## Top actions")
    add("")
    if not report.top_actions:
        add("Not judged yet." if progress else "Nothing to do.")
    for action in report.top_actions:
        add(
            f"{action.rank}. **{_md_escape(action.title)}** ({action.target_layer}, effort "
            f"{action.effort}) — {_md_escape(action.rationale)}"
        )
    add("")
    add("## Scores")
    add("")
    add("| dimension | score |")
    add("|---|---|")
    for key in _PCT_KEYS:
        add(f"| {key.replace('_', ' ')} | {_pct(getattr(report.scores, key))} |")
    add("")
    add("| case | scenario | fixture | expected | actual | overall | pass |")
    add("|---|---|---|---|---|---|---|")
    for case in report.cases:
        passed = {True: "pass", False: "FAIL", None: case.status}[case.passed]
        add(
            f"| {case.id} | {case.scenario} | {case.fixture} ({case.noise_level or '-'}) "
            f"| {case.expected_status} | {case.actual_status or '-'} | "
            f"{_pct(case.scores.overall)} | {passed} |"
        )
    add("")
    add("## Fixtures")
    add("")
    add("| fixture | noise level | lines | typo rate | duplicated lines | structure score |")
    add("|---|---|---|---|---|---|")
    seen: set[str] = set()
    for case in report.cases:
        if case.fixture in seen:  # each fixture once, whatever the trials that read it
            continue
        seen.add(case.fixture)
        m = case.fixture_metrics
        add(
            f"| {case.fixture} | {case.noise_level or '-'} | "
            f"{int(m.get('line_count', 0))} | {_pct(m.get('typo_rate'))} | "
            f"{_pct(m.get('duplicated_line_share'))} | {m.get('structure_score', 0):.2f} |"
        )
    t = report.tokens
    add("")
    add("## Tokens")
    add("")
    add(
        f"The lab's roles used {t.used:,} of {t.budget:,}"
        + (f" ({t.note})" if t.note else "")
        + "."
    )
    add("")
    if bot_metered(t):
        add(
            f"The bot, run by the lab (role responder), used {t.responder_used:,} of its own "
            f"budget of {t.responder_budget:,}."
        )
        add("")
    for role, used in t.by_role.items():
        add(f"- {role}: {used:,}")
    add("")
    if t.judge_held:
        add(
            f"{t.judge_held:,} tokens ({t.judge_share:.0%} of the budget) were held for the "
            "judge stage: generation and simulation could not spend them."
        )
        add("")
    calls = (
        "offline engine call(s)" if report.engine == "offline" else "request(s) to the LLM endpoint"
    )
    add(
        f"{t.requests} {calls} ({t.calls} ledger rows); "
        f"{t.retries} retried attempt(s), "
        f"{t.invalid} invalid reply(ies), {t.fallbacks} fallback(s) to the "
        f"offline implementation, {t.replayed} replayed"
        + (f", {t.orphaned} orphaned reservation(s) charged in full" if t.orphaned else "")
        + "."
    )
    d = report.delta
    add("")
    add("## Delta")
    add("")
    if not d:
        add(_md_escape(report_no_baseline(report)))
    else:
        overall = d.scores.overall
        change = "n/a" if overall is None else f"{overall * 100:+.1f} pts"
        add(
            f"Versus run {d.previous_run_id} ({_md_escape(d.basis_reason)}): verdict "
            f"{d.verdict.previous} -> {d.verdict.current}; overall score change "
            f"{change}; "
            f"tokens {d.tokens:+,}."
        )
        changes = delta_changes(d)
        add("")
        add(f"**{delta_test_set(d).capitalize()}: {_md_escape(delta_significance(d))}.**")
        s = d.significance
        if s.to_fail or s.to_pass:
            add("")
            add(
                "Flipped: "
                + "; ".join(
                    part
                    for part in (
                        "to fail " + ", ".join(_md_escape(k) for k in s.to_fail)
                        if s.to_fail
                        else "",
                        "to pass " + ", ".join(_md_escape(k) for k in s.to_pass)
                        if s.to_pass
                        else "",
                    )
                    if part
                )
                + "."
            )
        add("")
        add(
            "Changed inputs: "
            + ("; ".join(_md_escape(c) for c in changes) if changes else "none")
            + "."
        )
        add("")
        fd = d.findings
        add(
            f"Findings new {fd.new.total}, resolved {fd.resolved.total}, "
            f"persisting {fd.persisting.total}"
            + (
                f", not played {fd.not_played.total} (their cases were not played and judged "
                "by this run: not resolved)"
                if fd.not_played.total
                else ""
            )
            + "."
        )
    add("")
    return "\n".join(lines)
