"""Start run is idempotent (issue 33, item 7): the form carries a one-time token, so a double
POST of the same form (a double click, a retried request) makes one run, and the second POST is
sent to the first run's page."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import import_demo_org
from tests.runs.helpers import RecordingDispatcher


def _form(client: Client) -> dict[str, Any]:
    page = client.get(reverse("admin:runs_run_start")).content.decode()
    token = re.search(r'name="start_token" value="([^"]+)"', page)
    assert token, "the Start run form carries a start_token"
    return {"preset": "quick", "responder": "", "start_token": token.group(1)}


@pytest.mark.django_db
def test_a_double_post_of_the_same_form_makes_one_run(admin_client, monkeypatch):
    from runs.admin import start
    from runs.models import Run

    monkeypatch.setattr(start, "CeleryDispatcher", RecordingDispatcher)
    org = import_demo_org()
    data = {**_form(admin_client), "organization": org.pk}
    first = admin_client.post(reverse("admin:runs_run_start"), data)
    second = admin_client.post(reverse("admin:runs_run_start"), data)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Run.objects.count() == 1
    # A new form is a new run.
    again = {**_form(admin_client), "organization": org.pk}
    assert again["start_token"] != data["start_token"]
    assert admin_client.post(reverse("admin:runs_run_start"), again).status_code == 302
    assert Run.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_posts_of_the_same_form_make_one_run(admin_user, monkeypatch):
    from runs.admin import start
    from runs.models import Run

    monkeypatch.setattr(start, "CeleryDispatcher", RecordingDispatcher)
    org = import_demo_org()
    clients = [Client(), Client()]
    for client in clients:
        client.force_login(admin_user)
    data = {**_form(clients[0]), "organization": org.pk}
    barrier = threading.Barrier(2)
    answers: list[Any] = []

    def post(client: Client) -> None:
        from django.db import connection

        barrier.wait()
        try:
            answers.append(client.post(reverse("admin:runs_run_start"), data))
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [a.status_code for a in answers] == [302, 302]
    assert answers[0]["Location"] == answers[1]["Location"]
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_a_forged_or_malformed_token_is_refused(admin_client):
    from runs.models import Run

    org = import_demo_org()
    page = admin_client.post(
        reverse("admin:runs_run_start"),
        {"organization": org.pk, "preset": "quick", "start_token": "x" * 500},
    )
    assert page.status_code == 200 and not Run.objects.exists()
