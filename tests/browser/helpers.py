"""Page helpers for the browser tests: log in, start a run, follow its progress, check markup."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from playwright.sync_api import Dialog, Frame, Page, expect
from playwright.sync_api import Error as PlaywrightError

from tests.responders import XSS_SCRIPT

USERNAME = "qa-admin"
PASSWORD = "browser-pw-5831"
VERDICTS = ("FAIL_CRITICAL", "PASS_WITH_FINDINGS", "PASS_CLEAN", "BUDGET_STOPPED")
VERDICT_RE = re.compile("|".join(VERDICTS))
REPORT_URL_RE = re.compile(r"/admin/runs/run/(\d+)/report/")


def login(page: Page, username: str = USERNAME, password: str = PASSWORD) -> None:
    """Log in through the admin login page."""
    page.goto("/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#user-tools")).to_contain_text(username, ignore_case=True)


def start_run(page: Page, org_pk: int, *, preset: str = "quick", responder: str = "") -> int:
    """From the runs list, click Start run, fill the form, submit; returns the new run's id."""
    page.goto("/admin/runs/run/")
    page.get_by_role("link", name="Start run", exact=True).click()
    page.select_option("#id_organization", value=str(org_pk))
    page.select_option("#id_preset", value=preset)
    if responder:
        page.fill("#id_responder", responder)
    page.get_by_role("button", name="Start run", exact=True).click()
    page.wait_for_url(REPORT_URL_RE)
    match = REPORT_URL_RE.search(page.url)
    assert match, page.url
    return int(match.group(1))


@dataclass
class Progress:
    """What `follow_progress` saw on a report page."""

    in_place: list[str] = field(default_factory=list)  # #qa-progress texts, no reload between
    navigations: int = 0  # main-frame navigations (reloads) until the verdict
    verdict: str = ""
    marker_kept: bool = False  # window.__marker was still set when the verdict appeared
    seconds: float = 0.0


_PROBE = """() => [
    window.__marker === 1,
    document.querySelector('#qa-progress')?.innerText ?? null,
    document.querySelector('.qa-verdict')?.innerText ?? '',
]"""


def follow_progress(page: Page, *, timeout: float = 120) -> Progress:
    """Watch the report page until a verdict shows; record #qa-progress contents that changed
    without a page reload (proved by `window.__marker`, set now, and by counting navigations)."""
    progress = Progress()
    started = time.monotonic()

    def on_navigated(frame: Frame) -> None:
        if frame == page.main_frame:
            progress.navigations += 1

    page.on("framenavigated", on_navigated)
    try:
        page.evaluate("() => { window.__marker = 1; }")
        while True:
            try:
                marker, text, verdict = page.evaluate(_PROBE)
            except PlaywrightError:  # the page is reloading
                marker, text, verdict = False, None, ""
            reloaded = progress.navigations > 0 or not marker
            if text and not reloaded and (not progress.in_place or progress.in_place[-1] != text):
                progress.in_place.append(text)
            found = VERDICT_RE.search(verdict or "")
            if found:
                progress.verdict = found.group(0)
                progress.marker_kept = not reloaded
                progress.seconds = time.monotonic() - started
                return progress
            if time.monotonic() - started > timeout:
                raise AssertionError(
                    f"no verdict after {timeout:.0f}s; last banner {verdict!r}, seen {progress}"
                )
            page.wait_for_timeout(200)
    finally:
        page.remove_listener("framenavigated", on_navigated)


_DOM_PROBE = """() => {
    const all = [...document.querySelectorAll('*')];
    return {
        scripts: [...document.scripts]
            .filter((s) => s.textContent.includes('alert('))
            .map((s) => s.outerHTML.slice(0, 200)),
        handlers: all.flatMap((el) => [...el.attributes]
            .filter((a) => a.name === 'onmouseover' || a.name === 'onerror'
                || (a.name.startsWith('on') && a.value.includes('alert')))
            .map((a) => `<${el.tagName.toLowerCase()} ${a.name}="${a.value}">`)),
        jsUrls: all.flatMap((el) => ['href', 'src', 'action', 'formaction']
            .map((n) => el.getAttribute(n))
            .filter((v) => v && v.replace(/\\s/g, '').toLowerCase().startsWith('javascript:'))
            .map((v) => `<${el.tagName.toLowerCase()} ...="${v}">`)),
    };
}"""


def assert_inert(page: Page, text: str = XSS_SCRIPT, *, expect_text: bool = True) -> None:
    """The current page shows `text` (a responder's markup) as plain text and runs none of it
    (with `expect_text` False: the page need not show it, but must run none of it).

    Reloads the page with a dialog watcher in place (so any injected script would fire under
    watch), opens every <details>, hovers each element showing the text, and checks there is no
    injected <script>, no event-handler attribute and no javascript: URL anywhere in the DOM.
    """
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        page.reload(wait_until="load")
        page.evaluate(
            "() => document.querySelectorAll('details').forEach((d) => { d.open = true; })"
        )
        shown = page.get_by_text(text)
        if expect_text:
            expect(shown.first).to_be_visible()
        for i in range(min(shown.count(), 25)):
            item = shown.nth(i)
            if item.is_visible():
                item.hover()
        page.wait_for_timeout(300)
        found = page.evaluate(_DOM_PROBE)
        assert found == {"scripts": [], "handlers": [], "jsUrls": []}, found
        assert not dialogs, f"the page opened dialogs: {dialogs}"
    finally:
        page.remove_listener("dialog", on_dialog)
