"""In a real browser: start a Quick run, watch its progress live, and read the report safely."""

from __future__ import annotations

import re
import subprocess

from playwright.sync_api import Page, expect

from qalab.models import Organization
from runs.models import Run, RunStatus
from tests.browser.helpers import assert_inert, follow_progress, start_run


def test_it_shows_live_progress_then_the_verdict(
    admin_page: Page, org: Organization, worker: subprocess.Popen[bytes]
) -> None:
    # The paced bot takes 0.25 s a reply, so the run lasts several 2 s polls on any machine (the
    # reference bot can finish a Quick run before the first poll).
    page = admin_page
    run_id = start_run(page, org.pk, preset="quick", responder="python:tests.responders:paced")
    expect(page.locator("ul.messagelist li.success").first).to_contain_text(
        f"Run #{run_id} started"
    )

    progress = follow_progress(page)

    # htmx swapped #qa-progress in place several times, and the verdict and the whole report
    # arrived in place too: the page was never reloaded.
    assert len(progress.in_place) >= 2, progress
    assert progress.marker_kept and progress.navigations == 0, progress
    assert progress.verdict == "FAIL_CRITICAL"  # the paced bot invents a price
    expect(page.get_by_role("heading", name=re.compile(r"^Findings"))).to_be_visible()
    assert page.evaluate("() => window.__marker") == 1
    expect(page.locator("#qa-progress")).not_to_have_attribute("hx-trigger", re.compile("."))
    run = Run.objects.get(pk=run_id)
    assert run.status == RunStatus.DONE
    assert run.verdict == progress.verdict
    assert worker.poll() is None


def test_it_renders_responder_markup_as_inert_text(
    admin_page: Page, org: Organization, worker: subprocess.Popen[bytes]
) -> None:
    page = admin_page
    run_id = start_run(page, org.pk, responder="python:tests.responders:xss")
    follow_progress(page)
    assert Run.objects.get(pk=run_id).responder_spec == "python:tests.responders:xss"

    assert_inert(page)
