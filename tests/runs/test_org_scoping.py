"""A staff member of org A sees nothing of org B through any admin page, filter, export or URL.

The crawl follows every link of the admin from the index as that user, and also asks for B's
objects directly; B's name, slug and run ids must appear nowhere.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

import pytest
from django.urls import reverse

from qalab.models import Organization
from tests.factories import import_demo_org, make_staff_user
from tests.runs.helpers import start_run

pytestmark = pytest.mark.django_db

SECRET_NAME = "Zebra Secret Clinic"
SECRET_SLUG = "zebra-secret"
_HREF = re.compile(r'href="(/admin/[^"#]*)"')


def _org_b() -> Organization:
    demo = import_demo_org()
    b = Organization.objects.get(pk=demo.pk)
    # A second org: the demo's context under another slug and name.
    from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
    from qalab.orgs import organization_import

    context = load_org_folder(DEMO_ORG_DIR).model_copy(
        update={"slug": SECRET_SLUG, "name": SECRET_NAME}
    )
    b, _ = organization_import(context=context)
    return b


def _crawl(client: Any, start: list[str], limit: int = 400) -> dict[str, tuple[int, str]]:
    seen: dict[str, tuple[int, str]] = {}
    queue = deque(start)
    while queue and len(seen) < limit:
        url = queue.popleft()
        if url in seen or "/logout" in url or "/delete/" in url:
            continue
        response = client.get(url)
        body = response.content.decode(errors="replace") if response.status_code == 200 else ""
        seen[url] = (response.status_code, body)
        for link in _HREF.findall(body):
            link = link.replace("&amp;", "&")
            if link not in seen:
                queue.append(link)
    return seen


def test_a_staff_member_of_one_org_sees_nothing_of_another(client, django_user_model):
    a = import_demo_org()
    b = _org_b()
    run_a = start_run(a, responder="canary:invent_price", scenarios=1)
    run_b = start_run(b, responder="canary:invent_price", scenarios=1)
    models = {
        "qalab": ("organization", "service", "intakefield", "policy", "skill", "kbdocument"),
        "runs": ("run",),
    }
    perms = [
        f"{app}.{action}_{model}"
        for app, names in models.items()
        for model in names
        for action in ("view", "change", "add")
    ]
    perms += ["qalab.start_run", "runs.view_runfinding"]
    perms = tuple(p for p in perms if _perm_exists(p))
    user = make_staff_user(django_user_model, perms=perms)
    a.members.add(user)
    client.force_login(user)

    case_b = run_b.cases.first()
    direct = [
        reverse("admin:qalab_organization_change", args=[b.pk]),
        reverse("admin:runs_run_report", args=[run_b.pk]),
        reverse("admin:runs_run_case", args=[run_b.pk, case_b.scenario_key]),
        reverse("admin:runs_run_delta", args=[run_b.pk]),
        reverse("admin:runs_run_export_json", args=[run_b.pk]),
        reverse("admin:runs_run_export_md", args=[run_b.pk]),
        reverse("admin:runs_run_trend", args=[b.slug]),
        reverse("admin:runs_run_trend", args=[b.pk]),
        reverse("admin:runs_run_delta", args=[run_a.pk]) + f"?other={run_b.pk}",
        reverse("admin:runs_run_changelist") + f"?organization__id__exact={b.pk}",
        reverse("admin:qalab_organization_changelist") + "?q=zebra",  # the user typed "zebra"
        "/admin/autocomplete/?app_label=runs&model_name=run&field_name=organization&term=zebra",
    ]
    pages = _crawl(client, ["/admin/", *direct])

    assert len(pages) > 20  # the crawl really walked the admin
    assert pages[reverse("admin:runs_run_report", args=[run_a.pk])][0] == 200
    assert pages[reverse("admin:runs_run_trend", args=[a.slug])][0] == 200  # linked, walked
    leaks = {
        url: status
        for url, (status, body) in pages.items()
        if SECRET_NAME in body or SECRET_SLUG in body or f"/run/{run_b.pk}/" in body
    }
    assert leaks == {}
    for url in direct[:8]:
        assert pages[url][0] in (302, 403, 404), url

    # Membership cannot be edited by staff: they cannot add themselves to org B.
    change_a = client.get(reverse("admin:qalab_organization_change", args=[a.pk]))
    assert 'name="members"' not in change_a.content.decode()


def _perm_exists(perm: str) -> bool:
    from django.contrib.auth.models import Permission

    app, codename = perm.split(".")
    return Permission.objects.filter(content_type__app_label=app, codename=codename).exists()
