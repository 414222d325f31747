"""In a real browser on a 1280 x 800 laptop screen, no main page scrolls sideways (issue 35,
point 3): a Regression run's report and case view, a run of trials, the runs list in every
view, the delta, the trend, the judge accuracy page (real bots' runs and the lab's own), the
organization's change page and Start run, with an organization name of 80-odd characters and a
grouped finding triaged in bulk with a note."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from qalab.models import Organization
from runs import services
from runs.inline import InlineDispatcher
from runs.models import Run, RunFinding
from tests.runs.bulk import bulk_runs
from tests.runs.helpers import AS_OF

WIDTH, HEIGHT = 1280, 800
LONG_NAME = "Harbour Lane Dental & Orthodontic Care of the Greater Dún Laoghaire–Rathdown Area"
CANARY = "canary:invent_price+wrong_hours+repeat_question"

# The page's width, and the widest elements that stick out of the viewport (for the message).
_WIDTHS = """() => {
    const root = document.documentElement;
    const out = [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 0.5)
        .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${[...el.classList].join('.')}`
            + ` ${Math.round(el.getBoundingClientRect().right)}`)
        .slice(0, 8);
    // Boxes that scroll sideways inside the page (the admin's list box does): cut-off columns.
    const inner = [...document.querySelectorAll('body *')]
        .filter((el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
            && el.scrollWidth > el.clientWidth + 1)
        .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${[...el.classList].join('.')}`
            + ` ${el.scrollWidth} > ${el.clientWidth}`);
    return {page: root.scrollWidth, client: root.clientWidth, out, inner};
}"""


def _run(org: Organization, **kwargs: Any) -> Run:
    run = services.run_create(organization=org, as_of=AS_OF, **kwargs)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run


def _runs(org: Organization, reviewer: Any) -> tuple[Run, Run, Run]:
    """A Regression run of a real bot, the same test set against a canary (triaged: its
    largest group in bulk, with a note), and a Quick run of 2 trials."""
    org.name = LONG_NAME
    org.save()
    base = _run(org, preset="regression", responder_spec="reference", seed=11)
    canary = _run(org, preset="regression", responder_spec=CANARY, reuse_artifacts=base.pk)
    assert canary.cases.count() == 24
    groups: dict[str, list[int]] = {}
    for f in RunFinding.objects.filter(run=canary).order_by("id"):
        groups.setdefault(f.fingerprint, []).append(f.id)
    biggest = max(groups.values(), key=len)
    assert len(biggest) >= 3
    services.finding_triage(
        run=canary,
        finding_ids=biggest,
        state="confirmed",
        note="Seen by the front desk too: the price list in the KB is from last year.",
        reviewer=reviewer,
    )
    trials = _run(org, preset="quick", responder_spec="reference", seed=5, trials=2, scenarios=4)
    bulk_runs(org, 20, responders=("https://chat.example.com/api/v2/assistant/messages",))
    bulk_runs(org, 3, selftest=True)
    return base, canary, trials


def _widths(page: Page, url: str) -> dict[str, Any]:
    """The page's scroll width and client width, every <details> open."""
    response = page.goto(url)
    assert response is not None and response.ok, url
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    widths: dict[str, Any] = page.evaluate(_WIDTHS)
    return widths


def test_every_page_fits_a_1280_px_screen(
    admin_page: Page, org: Organization, superuser: Any
) -> None:
    page = admin_page
    base, canary, trials = _runs(org, superuser)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    trial_case = trials.cases.filter(trial=2).order_by("scenario_key").last()
    assert trial_case is not None
    pages = [
        f"/admin/runs/run/{canary.pk}/report/",
        f"/admin/runs/run/{trials.pk}/report/",
        f"/admin/runs/run/{canary.pk}/cases/sc-01/",
        f"/admin/runs/run/{trials.pk}/cases/{trial_case.key}/",
        "/admin/runs/run/",
        "/admin/runs/run/?probe=all",
        "/admin/runs/run/?probe=lab",
        "/admin/runs/run/?probe=real",
        f"/admin/runs/run/{canary.pk}/delta/",
        f"/admin/runs/run/{canary.pk}/delta/?against={base.pk}",
        f"/admin/runs/run/trend/{org.slug}/",
        f"/admin/runs/run/accuracy/{org.slug}/",
        f"/admin/runs/run/accuracy/{org.slug}/?runs=lab",
        f"/admin/qalab/organization/{org.pk}/change/",
        "/admin/runs/run/start/",
    ]
    measured = {url: _widths(page, url) for url in pages}
    print({url: (w["page"], w["inner"]) for url, w in measured.items()})
    wide = {url: w for url, w in measured.items() if w["page"] > w["client"] or w["inner"]}
    assert not wide, wide

    # The report's case table: every column on screen, case ids whole on one line.
    page.goto(f"/admin/runs/run/{trials.pk}/report/")
    cell = page.locator("table.qa-cases tbody td:first-child a", has_text=trial_case.key)
    expect(cell).to_have_text(trial_case.key)
    box = cell.bounding_box()
    assert box is not None and box["height"] < 24, box  # one line
    last = page.locator("table.qa-cases thead th").last.bounding_box()
    assert last is not None and last["x"] + last["width"] <= WIDTH
