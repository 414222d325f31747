"""Malformed or out-of-range ids in run, case, finding and organization URLs are a 404 (or a
clear form error), never a 500 (issue 33, item 7)."""

from __future__ import annotations

import pytest
from django.test import Client

from qalab.models import Organization
from runs.models import Run
from tests.factories import bare_run

pytestmark = pytest.mark.django_db

BASE = "/admin/runs/run/"
HUGE = "9" * 30  # past any integer column


def _run(org: Organization) -> Run:
    return bare_run(org)


@pytest.mark.parametrize(
    "tail",
    [
        "abc/change/",
        "abc/",
        "-1/change/",
        "1.5/change/",
        "%C2%B2/change/",  # "²": str.isdigit() says yes, int() says no
        f"{HUGE}/change/",
        f"{HUGE}/report/",
        f"{HUGE}/delta/",
        f"{HUGE}/export.json",
        f"{HUGE}/export.md",
        f"{HUGE}/cases/a/",
        "trend/%C2%B2/",
        f"trend/{HUGE}/",
    ],
)
def test_a_malformed_id_is_a_404(admin_client: Client, demo_org: Organization, tail: str) -> None:
    response = admin_client.get(BASE + tail, follow=True)  # `abc/` redirects to `abc/change/`
    assert response.status_code == 404, (tail, response.status_code)


@pytest.mark.parametrize("tail", ["abc/history/", "abc/delete/", f"{HUGE}/history/"])
def test_the_admin_s_own_pages_answer_a_malformed_id_without_a_500(
    admin_client: Client, demo_org: Organization, tail: str
) -> None:
    """Django's own: history says "Run with ID … doesn't exist" on the index; delete is refused
    (runs are never deleted from the admin)."""
    response = admin_client.get(BASE + tail)
    assert response.status_code in (302, 403), (tail, response.status_code)


def test_a_good_id_still_redirects_to_its_report(
    admin_client: Client, demo_org: Organization
) -> None:
    run = _run(demo_org)
    response = admin_client.get(f"{BASE}{run.pk}/change/")
    assert response.status_code == 302
    assert response["Location"] == f"{BASE}{run.pk}/report/"


def test_malformed_ids_under_a_real_run_are_404s(
    admin_client: Client, demo_org: Organization
) -> None:
    run = _run(demo_org)
    for tail in (f"{run.pk}/cases/nope/", f"{run.pk}/delta/?against=abc"):
        assert admin_client.get(BASE + tail).status_code == 404, tail
    trend = admin_client.get(f"{BASE}trend/{demo_org.slug}/?n=%C2%B2")
    assert trend.status_code == 200  # an unknown size falls back to the default


@pytest.mark.parametrize("finding", ["abc", HUGE, "-1", "%C2%B2"])
def test_a_malformed_finding_id_in_a_triage_post_changes_nothing(
    admin_client: Client, demo_org: Organization, finding: str
) -> None:
    run = _run(demo_org)
    response = admin_client.post(
        f"{BASE}{run.pk}/triage/", {"finding": finding, "state": "confirmed", "note": ""}
    )
    assert response.status_code == 302
    assert "Nothing triaged" in str(list(response.wsgi_request._messages))
