"""Browser tests: Playwright (sync API) drives headless chromium against pytest-django's live
server, and a real `celery worker` subprocess executes the runs the browser starts.

Chromium is Debian's (`apt-get install chromium`), never Playwright's own download: the binary is
`$QALAB_CHROMIUM`, else /usr/bin/chromium, else `chromium` on PATH; without one every browser test
is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from qalab.models import Organization
from tests.browser.helpers import PASSWORD, USERNAME, login
from tests.conftest import run_celery_worker


def chromium_executable() -> str | None:
    """The chromium binary to drive, or None (the tests skip)."""
    configured = os.environ.get("QALAB_CHROMIUM")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


@pytest.fixture(scope="module", autouse=True)
def _allow_async_unsafe() -> Iterator[None]:
    """Playwright's sync API keeps an asyncio loop "running" in the test thread while it is up,
    so Django's async-safety guard would refuse every ORM call made by the test (and the
    transactional flush after it). The live server and the worker run in other threads and
    processes and are not affected. Scoped to the browser modules, not set for the whole session.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless chromium, one per test module."""
    executable = chromium_executable()
    if executable is None:
        configured = os.environ.get("QALAB_CHROMIUM")
        pytest.skip(
            f"QALAB_CHROMIUM={configured!r} is not an executable file"
            if configured
            else "no chromium binary (set QALAB_CHROMIUM, or `apt-get install chromium`)"
        )
    with sync_playwright() as pw:
        # Playwright already passes --no-sandbox (chromium_sandbox=False), needed as root.
        browser = pw.chromium.launch(
            executable_path=executable, headless=True, args=["--disable-dev-shm-usage"]
        )
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def _web_python_responders(settings: Any) -> None:
    """The test bots of tests/responders.py, registered for the web form as an operator would."""
    settings.QALAB_WEB_PYTHON_RESPONDERS = tuple(
        f"python:tests.responders:{name}" for name in ("paced", "xss", "slow", "hostile")
    )


@pytest.fixture
def page(browser: Browser, live_server: Any) -> Iterator[Page]:
    """A fresh browser context (no cookies) on the live server."""
    context = browser.new_context(base_url=live_server.url, accept_downloads=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def org(transactional_db: None) -> Organization:
    """The demo organization (Harbour Lane Dental, slug `demo`), committed for the worker."""
    from tests.factories import import_demo_org

    return import_demo_org()


@pytest.fixture
def superuser(django_user_model: Any, transactional_db: None) -> Any:
    return django_user_model.objects.create_superuser(
        username=USERNAME, email="qa@example.com", password=PASSWORD
    )


@pytest.fixture
def admin_page(page: Page, superuser: Any, org: Organization) -> Page:
    """A page logged in to the admin as a superuser, with the demo org imported."""
    login(page)
    return page


@pytest.fixture
def worker(live_server: Any, transactional_db: None) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` on its own queue; the live server's Start run enqueues there."""
    with run_celery_worker(concurrency=2) as proc:
        yield proc


@pytest.fixture
def fixtures_dir(settings: Any, tmp_path: Path) -> Path:
    """QALAB_FIXTURES_DIR in a temporary folder (the live server runs in this process)."""
    path = tmp_path / "kb-fixtures"
    path.mkdir()
    settings.QALAB_FIXTURES_DIR = path
    return path
