"""In a real browser: the review workflow on a finished run (case view with highlighted evidence,
triage, promote fixture, exports, delta) and cancelling a run in progress."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from playwright.sync_api import Dialog, Page, expect

from qalab.models import Organization
from runs.models import Run, RunArtifact, RunFinding, RunStatus
from tests.browser.helpers import assert_inert, follow_progress, start_run
from tests.responders import XSS_SCRIPT


def _finding_quoting_a_reply(run_id: int) -> tuple[RunFinding, str]:
    """The first finding whose evidence quotes a responder reply, and that quote."""
    for finding in RunFinding.objects.filter(run_id=run_id).order_by("position"):
        for ev in finding.evidence:
            if ev.get("source") == "reply" and ev.get("turn") is not None and ev.get("quote"):
                return finding, ev["quote"]
    raise AssertionError(f"run #{run_id} has no finding quoting a reply")


def _fixture_line(finding: RunFinding) -> str:
    """A line of the fixture (KB) the finding's case was played against."""
    assert finding.case is not None
    content = RunArtifact.objects.get(
        run_id=finding.run_id, kind="fixture", key=finding.case.fixture_key
    ).content
    documents = json.loads(content)["documents"]
    lines = [ln.strip() for d in documents for ln in d["text"].splitlines()]
    lines = [ln for ln in lines if len(ln) >= 20 and "  " not in ln]
    assert lines, content[:200]
    return lines[0][:60]


def test_it_reviews_a_run_end_to_end(
    admin_page: Page,
    org: Organization,
    worker: subprocess.Popen[bytes],
    fixtures_dir: Path,
) -> None:
    """Start a Quick run, watch it live, open a case with highlighted evidence, triage a finding,
    promote its fixture, export the report, then compare a second run in the delta."""
    page = admin_page
    run_id = start_run(page, org.pk, responder="python:tests.responders:paced")
    progress = follow_progress(page)
    assert len(progress.in_place) >= 2, progress
    assert progress.verdict == "FAIL_CRITICAL"
    report_url = page.url.split("#")[0]

    finding, quote = _finding_quoting_a_reply(run_id)
    # Findings with the same fingerprint are one entry listing every occurrence (#occ-<id>).
    item = page.locator("li.qa-finding", has=page.locator(f"#occ-{finding.pk}"))
    expect(item).to_be_visible()
    expect(item.locator(".qa-triage-state")).to_have_text(re.compile(r"^\s*open\s*$", re.I))

    # Exports download the JSON and Markdown reports.
    with page.expect_download() as download:
        page.locator("a#qa-export-json").click()
    exported = json.loads(Path(download.value.path()).read_text())
    assert exported["run_id"] == run_id
    assert exported["status"] == RunStatus.DONE
    with page.expect_download() as download:
        page.locator("a#qa-export-md").click()
    assert download.value.suggested_filename.endswith(".md")
    markdown = Path(download.value.path()).read_text()
    assert markdown.startswith(f"# AI QA Lab report: run {run_id}"), markdown[:200]

    # The case view: the conversation, the quote highlighted in its turn, fields, fixture.
    item.locator("a.qa-case-link").click()
    page.wait_for_load_state()
    expect(page.locator("mark.qa-evidence", has_text=quote[:40]).first).to_be_visible()
    expect(page.locator("table#qa-fields")).to_be_visible()
    fixture = page.locator("details#qa-fixture")
    fixture.evaluate("(details) => { details.open = true; }")
    expect(fixture.get_by_text(_fixture_line(finding)).first).to_be_visible()
    case_url = page.url

    # Triage the finding from the report's bulk form.
    page.goto(report_url)
    form = page.locator("form#qa-triage")
    item.locator("input[name=finding]").check()
    form.locator("select[name=state]").select_option("confirmed")
    form.locator("input[name=note]").fill("Seen in the browser test: the bot invents a price.")
    form.locator("button[name=apply]").click()
    page.wait_for_load_state()
    expect(page.locator("ul.messagelist li.success").first).to_be_visible()
    assert finding.triage.get().state == "confirmed"
    expect(item.locator(".qa-triage-state")).to_have_text(re.compile(r"^\s*confirmed\s*$", re.I))

    # Promote the case's fixture: the file lands inside QALAB_FIXTURES_DIR.
    page.goto(case_url)
    page.locator("form#qa-promote").get_by_role("button", name="Promote fixture").click()
    page.wait_for_load_state()
    message = page.locator("ul.messagelist li.success").first
    expect(message).to_be_visible()
    written = [p for p in fixtures_dir.rglob("*") if p.is_file()]
    assert len(written) == 1, written
    assert written[0].name in message.inner_text()
    assert _fixture_line(finding) in written[0].read_text()

    # A second run of the same org and preset but another bot: it has no default baseline
    # (a delta compares like with like), so the reviewer picks the first run.
    second_id = start_run(page, org.pk)
    second = follow_progress(page)
    page.locator("a#qa-delta-link").click()
    page.wait_for_load_state()
    expect(page.locator("#qa-delta")).to_contain_text("No earlier final run of")
    page.select_option("select[name=against]", value=str(run_id))
    page.get_by_role("button", name="Compare").click()
    page.wait_for_load_state()
    delta = page.locator("#qa-delta")
    expect(delta.locator(".qa-delta-basis")).to_contain_text("chosen by the reviewer")
    expect(delta).to_be_visible()
    expect(delta.locator(".qa-delta-verdict")).to_contain_text(progress.verdict)
    expect(delta.locator(".qa-delta-verdict")).to_contain_text(second.verdict)
    for heading in ("New", "Resolved", "Persisting"):
        expect(delta.get_by_role("heading", name=re.compile(rf"^\s*{heading}\b"))).to_be_visible()
    assert Run.objects.get(pk=second_id).verdict == second.verdict


def test_it_cancels_a_running_run_after_a_confirm(
    admin_page: Page, org: Organization, worker: subprocess.Popen[bytes]
) -> None:
    page = admin_page
    run_id = start_run(page, org.pk, responder="python:tests.responders:slow")
    button = page.locator("form.qa-cancel").get_by_role("button", name="Cancel run")
    dialogs: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.type)
        dialog.dismiss()

    def accept(dialog: Dialog) -> None:
        dialogs.append(dialog.type)
        dialog.accept()

    # Dismissing the confirm leaves the run going.
    page.once("dialog", dismiss)
    button.click()
    page.wait_for_timeout(500)
    assert dialogs == ["confirm"]
    assert Run.objects.get(pk=run_id).status != RunStatus.CANCELLED

    page.once("dialog", accept)
    button.click()
    expect(page.locator(".qa-verdict")).to_contain_text("CANCELLED", timeout=60_000)
    assert dialogs == ["confirm", "confirm"]
    assert Run.objects.get(pk=run_id).status == RunStatus.CANCELLED


def test_it_renders_responder_markup_inert_on_the_case_view(
    admin_page: Page, org: Organization, worker: subprocess.Popen[bytes]
) -> None:
    page = admin_page
    start_run(page, org.pk, responder="python:tests.responders:xss")
    follow_progress(page)
    page.locator("a.qa-case-link").first.click()
    page.wait_for_load_state()
    # The evidence quoting the reply is highlighted, and still only text.
    expect(page.locator("mark.qa-evidence", has_text=XSS_SCRIPT).first).to_be_visible()
    assert_inert(page)
    # A second run of the same bot: its delta page (finding subjects) and the runs list too.
    start_run(page, org.pk, responder="python:tests.responders:xss")
    follow_progress(page)
    page.locator("a#qa-delta-link").click()
    page.wait_for_load_state()
    expect(page.locator("#qa-delta")).to_be_visible()
    assert_inert(page, expect_text=False)
    page.goto(page.url.split("/admin/")[0] + "/admin/runs/run/")
    assert_inert(page, expect_text=False)
