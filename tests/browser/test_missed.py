"""In a real browser: a reviewer selects words the judge missed in a turn of a locked run, the
case page's form fills from the selection (static/qalab/report.js, no inline script), and the
report lists the miss with the verdict it would have had (issue 36, point 2)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from qalab.models import Organization
from runs.models import MissedFinding, Verdict
from tests.runs.test_missed_findings import MISSED, _run

# Selects `words` inside one turn's text, as a reviewer's mouse would, then lets go.
_SELECT = """([selector, words]) => {
  const root = document.querySelector(selector);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.textContent.indexOf(words);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + words.length);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    root.dispatchEvent(new MouseEvent("mouseup", {bubbles: true}));
    return true;
  }
  return false;
}"""


def test_a_reviewer_adds_a_miss_from_a_selection(admin_page: Page, org: Organization) -> None:
    run = _run(org)
    assert run.verdict == Verdict.PASS_WITH_FINDINGS
    case = run.cases.order_by("scenario_key", "trial").first()
    page = admin_page
    page.goto(f"/admin/runs/run/{run.pk}/cases/{case.key}/")
    form = page.locator("form#qa-missed-form")
    expect(form).to_be_visible()

    reply_1 = '.qa-reply .qa-turn-text[data-turn="1"]'
    assert page.evaluate(_SELECT, [reply_1, MISSED])
    expect(form.locator("textarea[name=quote]")).to_have_value(MISSED)
    expect(form.locator("select[name=turn_index]")).to_have_value("1")
    # A rule brings its usual severity.
    form.locator("select[name=rule_id]").select_option("questions_per_turn")
    expect(form.locator("select[name=severity]")).to_have_value("minor")
    form.locator("select[name=rule_id]").select_option("unsupported_facts")
    expect(form.locator("select[name=severity]")).to_have_value("critical")
    form.locator("textarea[name=note]").fill("the KB says nothing of parking")
    form.get_by_role("button", name="Add missed finding").click()
    page.wait_for_load_state()

    miss = MissedFinding.objects.get(run=run)
    assert (miss.turn_index, miss.severity, miss.quote) == (1, "critical", MISSED)
    item = page.locator(f"#missed-{miss.pk}")
    expect(item).to_contain_text("added by qa-admin")
    expect(item).to_contain_text(MISSED)

    page.goto(f"/admin/runs/run/{run.pk}/report/")
    expect(page.locator("#qa-missed-verdict")).to_contain_text(
        "would have been FAIL_CRITICAL (it stays PASS_WITH_FINDINGS"
    )
    expect(page.locator(".qa-verdict")).to_have_text("PASS_WITH_FINDINGS")
