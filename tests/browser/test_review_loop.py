"""In a real browser, the loop reviewers come back for: change the bot, run again, see what
changed, triage only what is new (issue 17, acceptance 1)."""

from __future__ import annotations

import re
import subprocess

from playwright.sync_api import Page, expect

from qalab.models import Organization
from runs.models import RunFinding
from tests.browser.helpers import follow_progress, start_run

FIRST_BOT = "python:tests.responders:slow"
SECOND_BOT = "python:tests.responders:paced"  # invents a price: a finding to triage


def _start_same_test_set(page: Page, org_pk: int, responder: str, same_as: int) -> int:
    page.goto(f"/admin/runs/run/start/?same_test_set_as={same_as}")
    page.select_option("#id_organization", value=str(org_pk))
    page.fill("#id_responder", responder)
    page.get_by_role("button", name="Start run", exact=True).click()
    page.wait_for_url(re.compile(r"/admin/runs/run/(\d+)/report/"))
    match = re.search(r"/run/(\d+)/report/", page.url)
    assert match, page.url
    return int(match.group(1))


def _changed_inputs(page: Page) -> list[str]:
    """The input lines of the delta page that say something changed."""
    items = page.locator("ul.qa-delta-inputs > li")
    return [
        items.nth(i).inner_text()
        for i in range(items.count())
        if items.nth(i).locator("strong", has_text="changed").count()
    ]


def test_a_changed_bot_a_triaged_finding_and_a_rerun(
    admin_page: Page, org: Organization, worker: subprocess.Popen[bytes]
) -> None:
    page = admin_page
    first = start_run(page, org.pk, responder=FIRST_BOT)
    follow_progress(page)

    # The bot changes; the test set stays (a re-run on the same test set).
    second = _start_same_test_set(page, org.pk, SECOND_BOT, same_as=first)
    assert follow_progress(page).verdict == "FAIL_CRITICAL"
    second_report = page.url.split("#")[0]

    # Its delta has no default baseline (another bot ran before): the reviewer picks run 1,
    # and the delta names the responder as the one input that changed.
    page.locator("a#qa-delta-link").click()
    page.wait_for_load_state()
    expect(page.locator("#qa-delta")).to_contain_text("No earlier final run of")
    page.select_option("select[name=against]", value=str(first))
    page.get_by_role("button", name="Compare").click()
    page.wait_for_load_state()
    expect(page.locator(".qa-delta-basis")).to_contain_text("chosen by the reviewer")
    changed = _changed_inputs(page)
    assert len(changed) == 1 and changed[0].startswith("Responder: changed"), changed
    assert FIRST_BOT in changed[0] and SECOND_BOT in changed[0]
    expect(page.locator("ul.qa-delta-inputs")).to_contain_text(
        "Test set (fixtures, manifest, scenarios): identical"
    )

    # Triage one finding of run 2 as a false positive, with a note.
    page.goto(second_report)
    finding = RunFinding.objects.filter(run_id=second).order_by("position").first()
    assert finding is not None
    item = page.locator("li.qa-finding", has=page.locator(f"#occ-{finding.pk}"))
    item.locator("input[name=finding]").check()
    form = page.locator("form#qa-triage")
    form.locator("select[name=state]").select_option("false_positive")
    form.locator("input[name=note]").fill("Our price list allows this: not a defect.")
    form.locator("button[name=apply]").click()
    page.wait_for_load_state()
    expect(page.locator("ul.messagelist li.success").first).to_be_visible()

    # Run again with the same bot: the decision comes back carried, not open.
    page.get_by_role("button", name="Re-run on the same test set").click()
    page.wait_for_url(re.compile(r"/admin/runs/run/(\d+)/report/"))
    third = int(re.search(r"/run/(\d+)/report/", page.url).group(1))  # type: ignore[union-attr]
    assert third not in (first, second)
    follow_progress(page)
    again = RunFinding.objects.get(run_id=third, fingerprint=finding.fingerprint, position=0)
    carried = page.locator("li.qa-finding", has=page.locator(f"#occ-{again.pk}"))
    expect(carried.locator(".qa-triage-state")).to_have_text(
        re.compile(r"^\s*false positive\s*$", re.I)
    )
    expect(carried.locator("a.qa-carried")).to_have_text(f"carried from run {second}")
    expect(page.locator("#qa-triage-carry")).to_contain_text("carried")

    # Its delta: the default baseline is run 2 (same bot), named with why; nothing changed.
    page.locator("a#qa-delta-link").click()
    page.wait_for_load_state()
    basis = page.locator(".qa-delta-basis")
    expect(basis).to_contain_text("default baseline")
    expect(basis).to_contain_text(SECOND_BOT)
    expect(page.locator("#qa-delta h2")).to_contain_text(f"#{second}")
    assert _changed_inputs(page) == []
