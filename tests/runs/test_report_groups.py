"""Issue 32, points 4 and 6, in the reports: one issue is one entry on the page, in the Markdown
and in the JUnit (the report build's `finding_groups`, same groups, same counts), and findings
dropped by the evidence check are counted in the JSON, the page and the Markdown."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from django.urls import reverse

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.engine import judge_case
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from runs.report.groups import group_findings
from runs.report.junit import report_to_junit
from runs.report.markdown import report_to_markdown
from runs.report.page import finding_groups
from runs.report.schema import RunReport
from tests.judge.factories import demo_manifest, make_case, make_config
from tests.runs.helpers import qalab_run
from tests.runs.test_ci_outputs import junit_cases, valid_junit

pytestmark = pytest.mark.django_db

RESPONDER = "canary:invent_price+contradict_self+too_many_questions"
_BULLET = re.compile(r"^- \*\*(CRITICAL|MAJOR|MINOR)\*\* `([^`]+)`(?: ×(\d+))? — ", re.M)
_ISSUE = re.compile(r"^(CRITICAL|MAJOR|MINOR) (\S+) ×(\d+) ", re.M)

Entry = tuple[str, str, int]  # severity, rule, count


def _page_entries(admin_client: Any, run_id: int) -> list[Entry]:
    page = admin_client.get(reverse("admin:runs_run_report", args=[run_id])).content.decode()
    entries: list[Entry] = []
    for item in page.split('<li class="qa-finding qa-sev-')[1:]:
        severity = item.split('"', 1)[0]
        rule = re.search(r"<code>([^<]+)</code>", item).group(1)
        many = re.search(r"<strong>(\d+) occurrences</strong>", item)
        entries.append((severity.upper(), rule, int(many.group(1)) if many else 1))
    return entries


def _markdown_entries(markdown: str) -> list[Entry]:
    return [(sev, rule, int(n or 1)) for sev, rule, n in _BULLET.findall(markdown)]


def _junit_entries(xml: str) -> list[Entry]:
    out = valid_junit(xml).find("system-out").text
    issues = out.split("== Findings by issue", 1)[1].split("\n== ", 1)[0]
    return [(sev, rule, int(n)) for sev, rule, n in _ISSUE.findall(issues)]


def _group_entries(report: RunReport) -> list[Entry]:
    return [(g.severity.upper(), g.rule_id, g.count) for g in report.finding_groups]


def test_markdown_and_junit_list_the_same_issues_with_the_same_counts_as_the_page(
    demo_org, admin_client, tmp_path
):
    code, data = qalab_run(
        "--org", "demo", "--inline", "--seed", "1", "--responder", RESPONDER,
        "--md", str(tmp_path / "r.md"), "--junit", str(tmp_path / "j.xml"), tmp_path=tmp_path,
    )  # fmt: skip
    assert code == 1
    report = RunReport.model_validate(data)
    groups = _group_entries(report)
    assert len(groups) < len(report.findings)  # the same defect in several cases
    assert sum(n for *_, n in groups) == len(report.findings)
    page = _page_entries(admin_client, report.run_id)
    markdown = (tmp_path / "r.md").read_text("utf-8")
    assert page == groups
    assert _markdown_entries(markdown) == groups
    assert _junit_entries((tmp_path / "j.xml").read_text("utf-8")) == groups
    # The page's per-severity headings and the Markdown's say the same number of issues.
    for severity, n in Counter(sev for sev, *_ in groups).items():
        assert f"### {severity.capitalize()} ({n} issue{'s' if n != 1 else ''})" in markdown
    assert data["summary"]["issues"] == {
        s: sum(1 for sev, *_ in groups if sev == s.upper()) for s in ("critical", "major", "minor")
    }
    # Each case's failure names how many findings its issue has in the run.
    failing = [tc for tc in junit_cases(valid_junit(tmp_path / "j.xml")).values() if len(tc)]
    assert failing and all("· issue ×12 in 12 cases" in tc[0].text for tc in failing)


def test_one_question_repeated_with_mixed_severities_is_one_entry_with_the_total_count(
    demo_org, admin_client, tmp_path
):
    """A question asked three times in one case is major, twice in another minor: the same
    defect (one fingerprint), so one entry whose severity is the worst and whose count is the
    total, not a major entry (x8) and a minor one (x4)."""
    thrice = make_case([("Hi", "What is your phone number?")] * 3)
    twice = make_case([("Hi", "What is your phone number?")] * 2)
    found = [
        next(f for f in judge_case(c, demo_manifest(), config=make_config()).findings)
        for c in (thrice, twice)
    ]
    assert [f.severity for f in found] == ["major", "minor"]
    assert found[0].fingerprint == found[1].fingerprint

    _, data = qalab_run(
        "--org", "demo", "--inline", "--seed", "1", "--responder", RESPONDER, tmp_path=tmp_path,
    )  # fmt: skip
    report = RunReport.model_validate(data)
    repeated = Counter(f.fingerprint for f in report.findings if f.rule_id == "repeated_question")
    fingerprint, count = repeated.most_common(1)[0]
    assert count >= 3
    # Some of that question's findings are minor (asked twice in their case), the others major.
    ids = [f.id for f in report.findings if f.fingerprint == fingerprint][: count // 2]
    findings = [
        f.model_copy(update={"severity": "minor"}) if f.id in ids else f for f in report.findings
    ]
    report = report.model_copy(
        update={"findings": findings, "finding_groups": group_findings(findings)}
    )
    [group] = [g for g in report.finding_groups if g.fingerprint == fingerprint]
    assert (group.severity, group.count) == ("major", count)
    [entry] = [g for g in finding_groups(report) if g.finding.fingerprint == fingerprint]
    assert entry.severity == "major" and len(entry.items) == count
    markdown = report_to_markdown(report)
    subject = group.subject
    bullets = [b for b in markdown.split("\n- ") if f"asked '{subject}'" in b.split("\n")[0]]
    assert len(bullets) == 1 and bullets[0].startswith(f"**MAJOR** `repeated_question` ×{count}")
    issues = _junit_entries(report_to_junit(report))
    assert issues.count(("MAJOR", "repeated_question", count)) >= 1
    assert not any(sev == "MINOR" for sev, *_ in issues)


class _InventedQuote(Check):
    """A deterministic rule whose customer quote the conversation never had (issue 32's
    "E-bike check, The E-bike check is"): the evidence check must drop it, and count it."""

    check_id = "partner_contradiction"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        first = case.turns[0]
        return [
            self.finding(
                case,
                severity="major",
                turn_index=first.index,
                subject="E-bike check",
                evidence=[
                    Evidence(source="reply", quote=first.reply, turn=first.index),
                    Evidence(source="customer", quote="E-bike check, The E-bike check is", turn=0),
                ],
                rationale="The customer gave their choice as 'E-bike check, The E-bike check is'.",
                fix_target="skill",
                fix_text="Read back what the customer said.",
                effort="S",
                confidence=0.8,
            )
        ]


def test_a_finding_whose_quote_is_not_in_the_transcript_is_dropped_and_counted(
    demo_org, admin_client, tmp_path, monkeypatch
):
    import judge.engine

    checks = judge.engine.all_checks
    monkeypatch.setattr(judge.engine, "all_checks", lambda: [*checks(), _InventedQuote()])
    md = tmp_path / "r.md"
    _, data = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "2", "--seed", "3",
        "--responder", "canary:invent_price", "--md", str(md), tmp_path=tmp_path,
    )  # fmt: skip
    assert data["summary"]["unsupported_findings"] == 2  # one per case, none reported
    assert data["summary"]["unsupported_by_rule"] == {"partner_contradiction": 2}
    assert [c["unsupported_by_rule"] for c in data["cases"]] == [{"partner_contradiction": 1}] * 2
    assert not any("E-bike" in e["quote"] for f in data["findings"] for e in f["evidence"])
    line = (
        "2 findings dropped: their quotes were not in the transcript or KB "
        "(partner_contradiction 2)."
    )
    assert line in md.read_text("utf-8")
    page = admin_client.get(reverse("admin:runs_run_report", args=[data["run_id"]]))
    assert line in page.content.decode()


def test_a_run_whose_evidence_all_checks_out_says_so(demo_org, tmp_path):
    md = tmp_path / "r.md"
    _, data = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "1", "--seed", "3",
        "--responder", "canary:invent_price", "--md", str(md), tmp_path=tmp_path,
    )  # fmt: skip
    assert data["summary"]["unsupported_findings"] == 0
    assert data["summary"]["unsupported_by_rule"] == {}
    text = md.read_text("utf-8")
    assert "Evidence check: every finding's quotes are verbatim in the transcript or KB." in text


def test_groups_are_by_fingerprint_most_severe_first_and_hold_every_finding_once(
    demo_org, tmp_path
):
    _, data = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "3", "--seed", "1",
        "--responder", RESPONDER, tmp_path=tmp_path,
    )  # fmt: skip
    report = RunReport.model_validate(data)
    assert report.finding_groups == group_findings(report.findings)
    ids = [i for g in report.finding_groups for i in g.finding_ids]
    assert sorted(ids) == sorted(f.id for f in report.findings)
    by_id = {f.id: f for f in report.findings}
    order = ["critical", "major", "minor"]
    for group in report.finding_groups:
        members = [by_id[i] for i in group.finding_ids]
        assert {f.fingerprint for f in members} == {group.fingerprint}
        assert group.severity == min((f.severity for f in members), key=order.index)
        assert members[0].severity == group.severity
    severities = [order.index(g.severity) for g in report.finding_groups]
    assert severities == sorted(severities)
