"""In a real browser on a 1280 x 800 laptop screen: the runs list fits without horizontal
scrolling (navigation sidebar and filters open), and the trend page draws its chart."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from qalab.models import Organization
from tests.runs.bulk import bulk_runs

WIDTH, HEIGHT = 1280, 800
# Typical values, on the long side: a deployed bot's URL, a python bot, the verdict names.
RESPONDERS = (
    "https://chat.harbour-lane-dental.example.com/api/v2/assistant/messages",
    "python:tests.responders:paced",
    "reference",
)

_WIDTHS = """() => ({
    viewport: window.innerWidth,
    page: document.documentElement.scrollWidth,
    table: Math.ceil(document.querySelector('#result_list').getBoundingClientRect().right),
    results: Math.floor(document.querySelector('.results').getBoundingClientRect().right),
    scrolls: document.querySelector('.results').scrollWidth
        - document.querySelector('.results').clientWidth,
    sidebar: !!document.querySelector('#nav-sidebar') &&
        getComputedStyle(document.querySelector('#nav-sidebar')).display !== 'none',
})"""


def _runs(org: Organization) -> None:
    other = Organization.objects.create(
        slug="northside-physio", name="Northside Family Physiotherapy", locale="en"
    )
    for o in (org, other):
        bulk_runs(o, 30, responders=RESPONDERS, scores=(0.62, 0.715, 0.8, 0.934))
        bulk_runs(o, 4, responders=RESPONDERS, verdict="FAIL_CRITICAL", scores=(0.41,))
        bulk_runs(o, 2, responders=("canary:invent_price+wrong_hours",), scores=(0.3,))
        bulk_runs(o, 2, selftest=True)
        bulk_runs(o, 2, status="simulating", verdict="", locked=False, scores=(None,))


def test_the_runs_list_fits_a_1280_px_screen(admin_page: Page, org: Organization) -> None:
    page = admin_page
    _runs(org)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    for url in ("/admin/runs/run/", "/admin/runs/run/?probe=all"):
        page.goto(url)
        expect(page.locator("#result_list svg.qa-spark").first).to_be_visible()
        widths = page.evaluate(_WIDTHS)
        assert widths["sidebar"], widths  # the admin's navigation is open, as by default
        assert widths["viewport"] == WIDTH
        # No horizontal scrolling: of the page, nor of the list's own box (which the admin
        # lets scroll sideways), and the table ends inside the viewport.
        assert widths["page"] <= WIDTH and widths["scrolls"] <= 0, (url, widths)
        assert widths["table"] <= widths["results"] <= WIDTH, (url, widths)
    expect(page.locator("#result_list .qa-probe").first).to_be_visible()

    page.locator("#result_list a.qa-org").first.click()
    expect(page.locator("svg.qa-trend-chart")).to_be_visible()
    assert page.locator("svg.qa-trend-chart circle").count() == 30
    assert page.locator("#qa-trend-table tbody tr").count() == 30
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
