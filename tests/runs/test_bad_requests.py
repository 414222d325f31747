"""Bad input from a browser gets a clear answer, never a 500, and changes nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from runs.models import Run
from tests.factories import bare_run
from tests.runs.helpers import start_run

pytestmark = pytest.mark.django_db


def test_a_nul_byte_in_a_search_filter_or_form_is_a_400(admin_client, demo_org):
    for url in (
        reverse("admin:qalab_organization_changelist") + "?q=a%00b",
        reverse("admin:runs_run_changelist") + "?status=%00",
    ):
        response = admin_client.get(url)
        assert response.status_code == 400, url
        assert "NUL" in response.content.decode()
    response = admin_client.post(
        reverse("admin:runs_run_start"),
        {"organization": demo_org.pk, "preset": "quick", "responder": "refer\x00ence"},
    )
    assert response.status_code == 400
    assert not Run.objects.exists()


def test_deleting_the_creator_of_a_locked_run_is_refused_with_a_page(
    admin_client, demo_org, django_user_model
):
    creator = django_user_model.objects.create_user("carol", password="x", is_staff=True)
    run = start_run(demo_org, scenarios=1)
    assert run.locked_at is not None
    fresh = bare_run(demo_org, created_by=creator)
    Run.objects.filter(pk=fresh.pk).update(status="done", locked_at=run.locked_at)

    url = reverse("admin:auth_user_delete", args=[creator.pk])
    page = admin_client.post(url, {"post": "yes"})
    assert page.status_code == 200  # Django's "cannot delete: protected objects" page
    assert "Cannot delete" in page.content.decode() or "protected" in page.content.decode()
    assert django_user_model.objects.filter(pk=creator.pk).exists()
    assert Run.objects.get(pk=fresh.pk).created_by_id == creator.pk


def test_a_server_error_leaves_its_traceback_in_the_log(admin_client, demo_org, monkeypatch):
    import logging

    from runs.admin import report as runs_admin

    run = start_run(demo_org, scenarios=1)

    def broken(**kwargs: object) -> None:
        raise RuntimeError("the report builder broke")

    monkeypatch.setattr(runs_admin, "report_build", broken)
    admin_client.raise_request_exception = False
    seen: list[logging.LogRecord] = []
    handler = logging.Handler(level=logging.ERROR)
    handler.emit = seen.append  # type: ignore[method-assign]
    logging.getLogger("django.request").addHandler(handler)
    try:
        response = admin_client.get(reverse("admin:runs_run_export_json", args=[run.pk]))
    finally:
        logging.getLogger("django.request").removeHandler(handler)
    assert response.status_code == 500
    assert any(r.exc_info and "report builder broke" in str(r.exc_info[1]) for r in seen)
    configured = logging.getLogger("django.request")
    assert configured.level == logging.ERROR and configured.handlers  # the console handler


def test_reports_keep_the_org_name_of_the_snapshot_after_a_rename(admin_client, demo_org):
    from qalab.models import Organization
    from runs.report import report_to_markdown
    from runs.report.build import report_build

    run = start_run(demo_org, scenarios=1)
    Organization.objects.filter(pk=demo_org.pk).update(name="Renamed Later Ltd")
    run = Run.objects.get(pk=run.pk)
    assert run.org_name == "Harbour Lane Dental" and run.org_slug == "demo"
    page = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert "Harbour Lane Dental" in page and "Renamed Later Ltd" not in page
    assert report_build(run=run).organization == "demo"
    assert "Renamed Later Ltd" not in report_to_markdown(report_build(run=run))
