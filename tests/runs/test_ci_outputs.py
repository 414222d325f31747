"""CI outputs of `qalab_run` (DESIGN §11, issue 18): `--junit PATH` and the Markdown summary
appended to `$GITHUB_STEP_SUMMARY`."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from lxml import etree

from runs.models import Run
from runs.report.junit import report_to_junit, xml_safe
from runs.report.schema import RunReport
from tests.runs.helpers import qalab_run

pytestmark = pytest.mark.django_db

XSD = Path(__file__).resolve().parents[1] / "data" / "JUnit.xsd"


def valid_junit(xml: str | Path) -> etree._Element:
    """Parse strictly (illegal characters are fatal) and validate against the Ant JUnit schema."""
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    raw = xml.read_bytes() if isinstance(xml, Path) else xml.encode("utf-8")
    root = etree.fromstring(raw, etree.XMLParser(resolve_entities=False))
    schema.assertValid(root)
    return root


def junit_run(tmp_path: Path, *flags: str) -> tuple[int, dict, etree._Element]:
    junit = tmp_path / "junit.xml"
    code, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "2", *flags, "--junit", str(junit),
        tmp_path=tmp_path,
    )  # fmt: skip
    return code, report, valid_junit(junit)


def junit_cases(root: etree._Element) -> dict[str, etree._Element]:
    return {tc.get("name"): tc for tc in root.iter("testcase")}


def outcome(testcase: etree._Element) -> str:
    children = [child.tag for child in testcase]
    assert len(children) <= 1
    return children[0] if children else "passed"


def test_junit_of_a_critical_run_validates_and_fails_exactly_the_critical_cases(demo_org, tmp_path):
    code, report, root = junit_run(tmp_path, "--responder", "canary:invent_price", "--seed", "3")
    assert code == 1 and report["verdict"] == "FAIL_CRITICAL"
    cases = junit_cases(root)
    # One testcase per case, named by its id and scenario, classed by org and scenario type.
    assert sorted(cases) == sorted(f"{c['id']} ({c['scenario']})" for c in report["cases"])
    for case in report["cases"]:
        tc = cases[f"{case['id']} ({case['scenario']})"]
        assert tc.get("classname") == f"qalab.demo.{case['scenario']}"
        assert float(tc.get("time")) == sum(t["latency_ms"] for t in case["turns"]) / 1000
    critical = {f["case"] for f in report["findings"] if f["severity"] == "critical"}
    assert critical  # the canary invents a price in every case
    failed = {name.split(" ")[0] for name, tc in cases.items() if outcome(tc) == "failure"}
    assert failed == critical
    assert root.get("name") == "qalab.demo.quick"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == (
        str(len(report["cases"])),
        str(len(critical)),
        "0",
    )
    finding = next(f for f in report["findings"] if f["severity"] == "critical")
    failure = cases[next(n for n in cases if n.startswith(finding["case"] + " "))][0]
    assert failure.get("type") == "critical"
    assert failure.get("message").startswith("1 critical finding; first: unsupported_facts")
    body = failure.text
    assert "CRITICAL unsupported_facts, turn 0" in body
    assert finding["evidence"][0]["quote"] in body and "17.35 EUR" in body
    assert finding["fix"]["text"] in body
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["run_id"] == str(report["run_id"])
    assert props["verdict"] == "FAIL_CRITICAL"
    assert props["responder"] == "canary:invent_price"
    assert props["seed"] == "3"
    assert props["settings_hash"] == report["settings_hash"]
    assert props["score_overall"] == f"{report['scores']['overall']:.4f}"


def test_an_errored_case_is_a_junit_error(demo_org, tmp_path):
    code, report, root = junit_run(
        tmp_path, "--responder", "python:tests.responders:fails_after_greeting"
    )
    assert code == 1
    assert {c["status"] for c in report["cases"]} == {"error"}
    cases = junit_cases(root)
    assert len(cases) == len(report["cases"])
    assert {outcome(tc) for tc in cases.values()} == {"error"}
    assert root.get("errors") == str(len(cases)) and root.get("failures") == "0"
    error = next(iter(cases.values()))[0]
    assert "RuntimeError: upstream model unavailable" in error.get("message")
    assert "CRITICAL case_error" in error.text  # the case's findings, listed


def test_control_characters_in_a_reply_do_not_break_the_xml(demo_org, tmp_path):
    from tests.responders import CONTROL_REPLY

    code, report, root = junit_run(tmp_path, "--responder", "python:tests.responders:control_chars")
    assert code == 1  # the invented price is critical
    assert CONTROL_REPLY in {t["reply"] for c in report["cases"] for t in c["turns"]}
    text = (tmp_path / "junit.xml").read_text(encoding="utf-8")
    assert not any(ch in text for ch in "\x01\x08\x0b\x0c\x1b\ufffe")
    # The reply is still quoted, without the characters XML cannot hold.
    assert "19 EUR[31m today" in text
    assert len(junit_cases(root)) == len(report["cases"])


def test_xml_safe_strips_what_xml_1_0_forbids():
    assert xml_safe("a\x00b\x1fc\ud800d\ufffee\uffff\tf\ng\rh€😀") == "abcde\tf\ng\rh€😀"


def test_run_wide_findings_get_a_testcase_and_waived_or_minor_findings_pass(demo_org, tmp_path):
    """Outcomes follow the gate: a waived critical or a major finding passes (listed in the
    suite's output), a run-wide critical fails its own testcase."""
    _, data, _ = junit_run(tmp_path, "--responder", "canary:invent_price", "--seed", "3")
    report = RunReport.model_validate(data)
    first, second = report.findings[0], report.findings[1]
    waived = first.model_copy(
        update={
            "triage": first.triage.model_copy(update={"state": "wont_fix", "gate_waived": True})
        }
    )
    major = second.model_copy(update={"severity": "major", "rationale": "MAJOR ONLY"})
    run_wide = first.model_copy(update={"case": None, "turn": None, "rationale": "RUN WIDE"})
    root = valid_junit(
        report_to_junit(report.model_copy(update={"findings": [waived, major, run_wide]}))
    )
    cases = junit_cases(root)
    assert len(cases) == len(report.cases) + 1
    assert [outcome(tc) for tc in cases.values()] == ["passed", "passed", "failure"]
    assert cases["run"].get("classname") == "qalab.demo.run"
    assert "RUN WIDE" in cases["run"][0].get("message")
    out = root.find("system-out").text
    assert "does not fail the gate" in out and "MAJOR ONLY" in out
    # Without run-wide findings there is no such testcase.
    only_cases = valid_junit(report_to_junit(report.model_copy(update={"findings": [major]})))
    assert "run" not in junit_cases(only_cases)


def test_cases_skipped_by_the_budget_are_skipped(demo_org, tmp_path):
    _, data, _ = junit_run(tmp_path, "--responder", "canary:invent_price", "--seed", "3")
    report = RunReport.model_validate(data)
    skipped = report.cases[1].model_copy(update={"status": "skipped_budget", "passed": None})
    report = report.model_copy(
        update={
            "cases": [report.cases[0], skipped],
            "findings": [f for f in report.findings if f.case != skipped.id],
        }
    )
    root = valid_junit(report_to_junit(report))
    assert root.get("skipped") == "1"
    tc = junit_cases(root)[f"{skipped.id} ({skipped.scenario})"]
    assert outcome(tc) == "skipped" and "budget" in tc[0].get("message")


def test_a_run_that_ended_in_error_is_one_errored_testcase(demo_org, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    # Nothing listens on port 9: the preflight fails and the run ends in error, no case played.
    code, report, root = junit_run(tmp_path, "--responder", "http://127.0.0.1:9/bot")
    assert code == 4 and report["status"] == "error" and report["cases"] == []
    cases = junit_cases(root)
    assert list(cases) == ["run"] and outcome(cases["run"]) == "error"
    message = cases["run"][0].get("message")  # the run's error, on one line, cut at 300
    assert message and " ".join(report["error"].split()).startswith(message.removesuffix("…"))
    assert (root.get("tests"), root.get("errors")) == ("1", "1")
    assert report["error"].split()[0] in root.find("system-err").text
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "**No verdict** (status `error`)" in summary and "> Run error: " in summary


def test_it_exits_2_for_a_junit_path_it_cannot_write_before_running(demo_org, tmp_path):
    for path, says in ((tmp_path / "missing" / "j.xml", "does not exist"), (tmp_path, "folder")):
        with pytest.raises(CommandError, match=f"--junit .*{says}") as exc:
            call_command("qalab_run", "--org", "demo", "--inline", "--junit", str(path))
        assert exc.value.returncode == 2
    assert not Run.objects.exists()


def test_the_step_summary_is_appended_when_github_step_summary_is_set(
    demo_org, tmp_path, monkeypatch
):
    summary = tmp_path / "step_summary.md"
    summary.write_text("## An earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "2", "--seed", "3",
        "--responder", "python:tests.responders:markdown_links", tmp_path=tmp_path,
    )  # fmt: skip
    assert code == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## An earlier step\n")  # appended, not overwritten
    added = text.removeprefix("## An earlier step\n")
    assert f"### AI QA Lab: run {report['run_id']} · `demo` · `quick`" in added
    assert f"**Verdict: {report['verdict']}**" in added
    f = report["summary"]["findings"]
    assert f"findings {f['critical']} critical, {f['major']} major, {f['minor']} minor" in added
    assert "**Top findings**" in added and f"`{report['findings'][0]['rule_id']}`" in added
    assert "**Top actions**" in added and report["top_actions"][0]["title"] in added
    assert "**Delta:** No earlier final run of demo · quick" in added
    assert "## Scores" not in added and "## Fixtures" not in added  # compact, not the report
    # Bot text that reaches the summary is escaped like the Markdown report's.
    from runs.report.step_summary import report_to_step_summary
    from tests.responders import MARKDOWN_REPLY

    typed = RunReport.model_validate(report)
    hostile = typed.findings[0].model_copy(update={"rationale": MARKDOWN_REPLY})
    md = report_to_step_summary(typed.model_copy(update={"findings": [hostile]}))
    assert "\\[Book here\\](javascript:alert(1))" in md and "&lt;javascript" in md
    assert not re.search(r"(?<!\\)[\[\]]", md.split("**Top findings**")[1].split("**Top")[0])

    # Unset: nothing is written anywhere.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    qalab_run("--org", "demo", "--inline", "--scenarios", "1", "--seed", "3", tmp_path=tmp_path)
    assert summary.read_text(encoding="utf-8") == text
    after = sorted(p.name for p in tmp_path.iterdir())
    assert after == sorted([*before, "report-1.json"])


def test_an_unwritable_step_summary_warns_and_the_run_goes_on(demo_org, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no" / "such" / "summary.md"))
    err = io.StringIO()
    call_command(
        "qalab_run", "--org", "demo", "--inline", "--scenarios", "1", "--seed", "3",
        "--json", str(tmp_path / "r.json"), stderr=err,
    )  # fmt: skip
    assert "warning: could not append the summary to $GITHUB_STEP_SUMMARY" in err.getvalue()
    assert Run.objects.get().verdict
