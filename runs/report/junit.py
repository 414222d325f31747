"""The JUnit XML of a run (`qalab_run --junit PATH`, DESIGN §11), read by GitLab, Jenkins, Azure
DevOps and most CI dashboards. Pure: built from the `RunReport` only, no Django.

One `<testsuite>` per run (`qalab.<org>.<preset>`), with the run's id, verdict, responder, seed,
settings hash and scores as `<properties>` (with `--trials K`: trials, pass_rate, pass_hat_k,
pass_at_k, flaky_scenarios, flaky_issues), and one `<testcase>` per case, so one per trial
(classname `qalab.<org>.<scenario>`, name `<case id> (<scenario>)`, or `<case id> (<scenario>,
trial n of K)`; time = the bot's reply latency summed over the case's turns). A finding of an
issue found in some trials only says "flaky: found in n of m trials". The JUnit outcome follows the gate: a case is a failure exactly when it
holds a critical finding that counts toward FAIL_CRITICAL, and what passes the gate passes here:

- a case with a critical finding that fails the gate -> `<failure type="critical">`: the message
  counts them and names the first, the body lists every finding of the case (severity, rule,
  turn, how many findings its issue has in the run, evidence quotes, suggested fix);
- a case that errored (the responder failed) -> `<error>` with the case's error, findings listed;
- a case skipped when the budget ran out, cancelled, or not played yet -> `<skipped>`;
- otherwise the case passes, even with major or minor findings, below its pass threshold, or with
  a critical finding a carried triage decision waives: none of these fails the gate (the run
  exits 0 on them). Their findings go to the suite's `<system-out>`, under the case's name: the
  Ant JUnit schema (tests/data/JUnit.xsd) has no output per testcase;
- run-wide findings (no case), or a run that ended in error, get a testcase `run` of their own.

The suite's `<system-out>` opens with every issue of the run once, with its count: the finding
groups of the report (`runs.report.groups`), the same entries the report page and the Markdown
list.

Bot output is untrusted: every string loses the characters XML 1.0 does not allow (control
characters, U+FFFE/U+FFFF, lone surrogates); ElementTree escapes the rest.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from runs.report.groups import report_groups
from runs.report.schema import Case, Finding, FindingGroup, RunReport
from runs.report.trials import flaky_text, trial_label

# Anything but XML 1.0's Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
# [#x10000-#x10FFFF].
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MESSAGE_CHARS = 300
_NOT_PLAYED = {
    "skipped_budget": "skipped: the token budget ran out before this case",
    "cancelled": "not played: the run was cancelled",
    "queued": "not played yet when the report was written",
    "running": "still running when the report was written",
}
_SCORE_KEYS = ("groundedness", "extraction_accuracy", "conversation_quality", "overall")


def xml_safe(text: object) -> str:
    """`text` without the characters XML 1.0 forbids (they cannot even be escaped)."""
    return _ILLEGAL_XML.sub("", str(text))


def _short(text: str, limit: int = _MESSAGE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _gating(finding: Finding) -> bool:
    """Counts toward FAIL_CRITICAL, as the gate counts it (judge/gate.py)."""
    return finding.severity == "critical" and not finding.triage.gate_waived


def _occurrences(group: FindingGroup | None) -> str:
    """How many findings the finding's issue (its group) has in the run, as the report page
    counts them: " · issue x12 in 12 cases" (with a multiplication sign)."""
    if group is None or group.count < 2:
        return ""
    cases = len(group.cases)
    return f" · issue ×{group.count} in {_plural(cases, 'case')}"


def finding_text(finding: Finding, group: FindingGroup | None = None) -> str:
    """One finding in plain text, for a failure body or the suite's output; with its `group`
    (`runs.report.groups`), how many findings that issue has in the run."""
    turn = f", turn {finding.turn}" if finding.turn is not None else ""
    lines = [
        f"{finding.severity.upper()} {finding.rule_id}{turn} (confidence {finding.confidence:.2f})"
        + (f", also {', '.join(finding.corroborating)}" if finding.corroborating else "")
        + _occurrences(group),
        f"  {finding.rationale}",
    ]
    if group is not None and (flaky := flaky_text(group)):
        lines.insert(1, f"  {flaky}")
    for ev in finding.evidence:
        where = f"{ev.source}, turn {ev.turn}" if ev.turn is not None else ev.source
        lines.append(f"  evidence ({where}): “{ev.quote}”")
    lines.append(f"  fix ({finding.fix.target}, effort {finding.effort}): {finding.fix.text}")
    t = finding.triage
    if t.state != "open" or t.carried_from is not None:
        lines.append(
            f"  triage: {t.state.replace('_', ' ')}"
            + (f" by {t.reviewer}" if t.reviewer else "")
            + (f", carried from run {t.carried_from}" if t.carried_from is not None else "")
            + (" (does not fail the gate)" if t.gate_waived else "")
        )
    return "\n".join(lines)


@dataclass
class _Outcome:
    """A testcase's result: kind is failure, error, skipped or None (passed)."""

    kind: str | None = None
    type: str = ""
    message: str = ""
    body: str = ""
    output: list[str] = field(default_factory=list)


def _findings_outcome(
    findings: list[Finding], groups: dict[str, FindingGroup], *, error: str | None
) -> _Outcome:
    # One entry per issue: a case holds at most one finding of each group (judge.merge).
    listed = "\n\n".join(finding_text(f, groups.get(f.fingerprint)) for f in findings)
    if error is not None:
        return _Outcome("error", "case_error", _short(error), listed or error)
    critical = [f for f in findings if _gating(f)]
    if critical:
        first = critical[0]
        turn = f" at turn {first.turn}" if first.turn is not None else ""
        message = (
            f"{_plural(len(critical), 'critical finding')}; first: {first.rule_id}{turn}: "
            f"{first.rationale}"
        )
        return _Outcome("failure", "critical", _short(message), listed)
    return _Outcome(output=[listed] if listed else [])


def _case_outcome(case: Case, findings: list[Finding], groups: dict[str, FindingGroup]) -> _Outcome:
    if case.status in _NOT_PLAYED:
        outcome = _Outcome("skipped", message=_NOT_PLAYED[case.status])
        outcome.output = [finding_text(f, groups.get(f.fingerprint)) for f in findings]
        return outcome
    if case.status == "error":
        return _findings_outcome(findings, groups, error=case.error or "the case errored")
    outcome = _findings_outcome(findings, groups, error=None)
    if outcome.kind is None and case.passed is False:
        overall = case.scores.overall
        score = "n/a" if overall is None else f"{overall * 100:.1f}%"
        # Below the threshold, without a critical: the gate passes it, so does JUnit.
        outcome.output.insert(0, f"Below the case's pass threshold (overall {score}).")
    return outcome


def _issues_text(grouped: list[tuple[FindingGroup, list[Finding]]]) -> str:
    """Every issue of the run once, with its count: the report page's list of findings."""
    lines = [f"== Findings by issue ({_plural(len(grouped), 'issue')})"]
    for group, items in grouped:
        first = items[0]
        where = f"{_plural(len(group.cases), 'case')}" if group.cases else "run-wide"
        lines.append(
            f"{group.severity.upper()} {group.rule_id} ×{group.count} ({where}): "
            f"{_short(first.subject or first.rationale, 120)}"
        )
    return "\n".join(lines)


def _add(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: xml_safe(v) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_safe(text)
    return element


def _utc_stamp(iso: str | None, now: datetime) -> str:
    """The Ant schema's timestamp: UTC, to the second, no time zone."""
    moment = datetime.fromisoformat(iso) if iso else now
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _suite_seconds(report: RunReport, case_seconds: Iterable[float]) -> float:
    if report.started_at and report.finished_at:
        spent = datetime.fromisoformat(report.finished_at) - datetime.fromisoformat(
            report.started_at
        )
        return max(spent.total_seconds(), 0.0)
    return sum(case_seconds)


def _properties(report: RunReport) -> dict[str, object]:
    s, t = report.summary, report.tokens
    props: dict[str, object] = {
        "run_id": report.run_id,
        "organization": report.organization,
        "preset": report.preset,
        "status": report.status,
        "verdict": report.verdict or "none",
        "verdict_reason": report.verdict_reason,
        "responder": report.responder,
        "bot_called": str(report.bot_called).lower(),
        "engine": report.engine,
        "seed": report.seed,
        "as_of": report.as_of,
        "judge_layers": ",".join(report.judge_layers),
        "settings_hash": report.settings_hash,
    }
    for key in _SCORE_KEYS:
        value = getattr(report.scores, key)
        props[f"score_{key}"] = "n/a" if value is None else f"{value:.4f}"
    props |= {
        "findings_critical": s.findings.critical,
        "findings_major": s.findings.major,
        "findings_minor": s.findings.minor,
        "issues_critical": s.issues.critical,
        "issues_major": s.issues.major,
        "issues_minor": s.issues.minor,
        "findings_unsupported": s.unsupported_findings,
        "tokens_used": t.used,
        "tokens_budget": t.budget,
        # The bot's own calls when the lab ran it, metered against their own budget.
        "responder_tokens_used": t.responder_used,
        "responder_tokens_budget": t.responder_budget,
    }
    if trials := report.trials:  # a run of several trials per scenario
        props |= {
            "trials": trials.k,
            "pass_rate": "n/a" if trials.pass_rate is None else trials.pass_rate,
            "pass_hat_k": "n/a" if trials.pass_hat_k is None else trials.pass_hat_k,
            "pass_at_k": "n/a" if trials.pass_at_k is None else trials.pass_at_k,
            "flaky_scenarios": trials.flaky_scenarios,
            "flaky_issues": trials.flaky_issues,
        }
    return props


def _case_name(case: Case, report: RunReport) -> str:
    """'sc-01 (booking)'; with its trial in a run of several: 'sc-01.t2 (booking, trial 2 of 3)'."""
    label = trial_label(case, report.trials.k) if report.trials else ""
    return f"{case.id} ({case.scenario}" + (f", {label}" if label else "") + ")"


def _testcase(
    suite: ET.Element, *, classname: str, name: str, seconds: float, outcome: _Outcome
) -> None:
    testcase = _add(suite, "testcase", name=name, classname=classname, time=f"{seconds:.3f}")
    if outcome.kind == "skipped":
        _add(testcase, "skipped", message=outcome.message)
    elif outcome.kind is not None:
        _add(testcase, outcome.kind, outcome.body, message=outcome.message, type=outcome.type)


def report_to_junit(
    report: RunReport, *, hostname: str | None = None, now: datetime | None = None
) -> str:
    """The run as a JUnit XML document (UTF-8 text with its declaration); see the module doc."""
    now = now or datetime.now(UTC)
    grouped = report_groups(report)
    groups = {group.fingerprint: group for group, _ in grouped}
    by_case: dict[str | None, list[Finding]] = {}
    for finding in report.findings:
        by_case.setdefault(finding.case, []).append(finding)

    rows: list[tuple[str, str, float, _Outcome]] = []
    for case in report.cases:
        seconds = sum(turn.latency_ms for turn in case.turns) / 1000
        rows.append(
            (
                f"qalab.{report.organization}.{case.scenario}",
                _case_name(case, report),
                seconds,
                _case_outcome(case, by_case.get(case.id, []), groups),
            )
        )
    run_wide = by_case.get(None, [])
    if run_wide or report.status == "error":
        error = (report.error or "the run ended in error") if report.status == "error" else None
        rows.append(
            (
                f"qalab.{report.organization}.run",
                "run",
                0.0,
                _findings_outcome(run_wide, groups, error=error),
            )
        )

    kinds = [outcome.kind for *_, outcome in rows]
    suite = ET.Element("testsuite")
    for key, value in {
        "name": f"qalab.{report.organization}.{report.preset}",
        "timestamp": _utc_stamp(report.started_at, now),
        "hostname": hostname or socket.gethostname() or "localhost",
        "tests": len(rows),
        "failures": kinds.count("failure"),
        "errors": kinds.count("error"),
        "skipped": kinds.count("skipped"),
        "time": f"{_suite_seconds(report, (row[2] for row in rows)):.3f}",
    }.items():
        suite.set(key, xml_safe(value))
    properties = _add(suite, "properties")
    for key, value in _properties(report).items():
        _add(properties, "property", name=key, value=value)
    for classname, name, seconds, outcome in rows:
        _testcase(suite, classname=classname, name=name, seconds=seconds, outcome=outcome)

    verdict = report.verdict or f"no verdict ({report.status})"
    reason = f" — {report.verdict_reason}" if report.verdict_reason else ""
    out = [f"Run {report.run_id}: {verdict}{reason}"]
    if report.bot_not_called:
        out.append(report.bot_not_called)
    if grouped:
        out.append(_issues_text(grouped))
    for _classname, name, _seconds, outcome in rows:
        if outcome.output:
            out.append(f"== {name}\n" + "\n\n".join(outcome.output))
    _add(suite, "system-out", "\n\n".join(out) + "\n")
    _add(suite, "system-err", f"Run error: {report.error}\n" if report.error else "")
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode")
