"""Bad input from a browser gets a clear answer, never a 500, and changes nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from runs.models import Run
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
    fresh = Run.objects.create(
        organization=demo_org,
        preset="quick",
        responder_spec="reference",
        engine="offline",
        models_used={},
        seed=1,
        config={},
        settings_hash="x",
        source={},
        token_budget=1,
        created_by=creator,
    )
    Run.objects.filter(pk=fresh.pk).update(status="done", locked_at=run.locked_at)

    url = reverse("admin:auth_user_delete", args=[creator.pk])
    page = admin_client.post(url, {"post": "yes"})
    assert page.status_code == 200  # Django's "cannot delete: protected objects" page
    assert "Cannot delete" in page.content.decode() or "protected" in page.content.decode()
    assert django_user_model.objects.filter(pk=creator.pk).exists()
    assert Run.objects.get(pk=fresh.pk).created_by_id == creator.pk
