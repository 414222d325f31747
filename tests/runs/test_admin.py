"""The AI QA Lab admin pages: login, Start run, run list, report and live progress."""

from __future__ import annotations

import pytest
from django.urls import reverse

from runs import services
from runs.inline import InlineDispatcher
from runs.models import Run
from tests.factories import make_staff_user

pytestmark = pytest.mark.django_db


def _finished_run(org, **kw) -> Run:
    run = services.run_create(organization=org, preset="quick", scenarios=3, seed=1, **kw)
    d = InlineDispatcher()
    services.run_start(run=run, dispatcher=d)
    d.drain()
    run.refresh_from_db()
    return run


def test_it_requires_a_staff_login(client, demo_org):
    run = _finished_run(demo_org)
    for url in (
        reverse("admin:runs_run_changelist"),
        reverse("admin:runs_run_start"),
        reverse("admin:runs_run_report", args=[run.pk]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


def test_it_starts_a_run_from_the_form(admin_client, demo_org, django_capture_on_commit_callbacks):
    page = admin_client.get(reverse("admin:runs_run_start"))
    assert page.status_code == 200
    assert b"Quick" in page.content and b"Regression" in page.content
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(
            reverse("admin:runs_run_start"), {"organization": demo_org.pk, "preset": "regression"}
        )
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:runs_run_report", args=[run.pk])
    assert run.preset == "regression" and run.status == "queued"
    assert run.config["scenarios"] == 24 and run.token_budget == 100_000
    assert len(callbacks) == 1  # the generate task is sent once the transaction commits


def test_it_shows_a_bad_responder_spec_on_the_form(admin_client, demo_org):
    response = admin_client.post(
        reverse("admin:runs_run_start"),
        {"organization": demo_org.pk, "preset": "quick", "responder": "gopher://x"},
    )
    assert response.status_code == 200
    assert Run.objects.count() == 0
    assert b"errorlist" in response.content


def test_it_lists_runs_with_status_and_verdict(admin_client, demo_org):
    run = _finished_run(demo_org)
    response = admin_client.get(reverse("admin:runs_run_changelist"))
    assert response.status_code == 200
    content = response.content.decode()
    assert f"#{run.pk}" in content
    assert run.verdict in content
    assert "Start run" in content


def test_it_shows_the_report_findings_first(admin_client, demo_org):
    run = _finished_run(demo_org)
    response = admin_client.get(reverse("admin:runs_run_report", args=[run.pk]))
    content = response.content.decode()
    assert response.status_code == 200
    assert run.verdict in content
    # Seed 003 §6: verdict, findings, top 5 actions, then scores, tokens and the delta.
    assert content.index("qa-verdict") < content.index("Findings") < content.index("Top actions")
    assert content.index("Top actions") < content.index("Scores") < content.index('id="tokens"')
    assert content.index('id="tokens"') < content.index('id="delta"')
    assert "Tokens" in content
    for finding in run.findings.all()[:3]:
        assert finding.rule_id in content


def test_it_escapes_responder_text(admin_client, demo_org):
    run = _finished_run(demo_org, responder_spec="python:tests.responders:hostile")
    assert run.cases.filter(turns__responder_reply__contains="<script>").exists()
    content = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert "<script>alert('x')</script>" not in content
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in content


def test_it_refuses_to_change_a_locked_run(demo_org):
    from django.db import DatabaseError, connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("database triggers are Postgres-only")
    run = _finished_run(demo_org)
    assert run.locked_at is not None
    turn = run.cases.first().turns.first()
    for attempt in (
        lambda: type(turn).objects.filter(pk=turn.pk).update(responder_reply="rewritten"),
        lambda: run.artifacts.all().delete(),
        lambda: Run.objects.filter(pk=run.pk).update(verdict="PASS_CLEAN"),
        lambda: run.cases.first().turns.create(index=99, customer_message="x", responder_reply="y"),
    ):
        with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
            attempt()


def test_it_polls_progress_until_the_run_is_final(admin_client, demo_org):
    run = services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=1)
    url = reverse("admin:runs_run_report", args=[run.pk])
    fragment = admin_client.get(url, headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert b'hx-trigger="every 2s"' in fragment.content
    assert b"<html" not in fragment.content
    d = InlineDispatcher()
    services.run_start(run=run, dispatcher=d)
    d.drain()
    final = admin_client.get(url, headers={"HX-Request": "true"})
    html = final.content.decode()
    assert final.status_code == 200 and "<html" not in html
    assert "hx-trigger" not in html  # the verdict banner no longer polls
    run.refresh_from_db()
    assert run.verdict in html
    assert 'id="qa-report-body" hx-swap-oob="true"' in html and 'id="findings"' in html


def test_it_shows_only_runs_of_member_organizations(client, django_user_model, demo_org):
    run = _finished_run(demo_org)
    user = make_staff_user(django_user_model, perms=("qalab.start_run",))
    client.force_login(user)
    assert client.get(reverse("admin:runs_run_report", args=[run.pk])).status_code == 404
    demo_org.members.add(user)
    assert client.get(reverse("admin:runs_run_report", args=[run.pk])).status_code == 200


def test_it_refuses_start_without_permission(client, django_user_model, demo_org):
    user = make_staff_user(django_user_model)
    demo_org.members.add(user)
    client.force_login(user)
    response = client.post(
        reverse("admin:runs_run_start"), {"organization": demo_org.pk, "preset": "quick"}
    )
    assert response.status_code == 403
    assert Run.objects.count() == 0
    changelist = client.get(reverse("admin:runs_run_changelist")).content.decode()
    assert "Start run" not in changelist


def test_it_reruns_a_report_on_the_same_test_set(admin_client, demo_org):
    first = _finished_run(demo_org)
    page = admin_client.get(reverse("admin:runs_run_report", args=[first.pk]))
    assert b"Re-run on the same test set" in page.content
    response = admin_client.post(
        reverse("admin:runs_run_start"),
        {
            "organization": demo_org.pk,
            "preset": first.preset,
            "responder": first.responder_spec,
            "same_test_set_as": first.pk,
        },
    )
    second = Run.objects.exclude(pk=first.pk).get()
    assert response.status_code == 302
    assert second.config["reuse_artifacts"] == first.pk
    assert second.seed == first.seed


def test_it_shows_measured_fixture_noise(admin_client, demo_org):
    run = _finished_run(demo_org)
    page = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert "Typo rate" in page and "Structure score" in page
    for case in run.cases.all():
        assert f"<td>{case.fixture_key}</td><td>" in page


def test_it_shows_the_rules_catalog_and_the_formulas(admin_client, demo_org):
    from django.utils.html import escape

    from judge.rules import RULES, catalog_rows

    page = admin_client.get(reverse("admin:runs_run_rules")).content.decode()
    for rule in RULES:
        assert f"<code>{rule.id}</code>".replace("<rule>", "&lt;rule&gt;") in page
    # The page shows the registry's texts, thresholds filled in, as docs/rules.md does.
    for row in catalog_rows():
        for text in (row.summary, row.other_severities, row.other_fix_targets, *row.thresholds):
            assert escape(text) in page, (row.id, text)
    assert "How scores are computed" in page
    run = _finished_run(demo_org)
    report = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert "How scores are computed" in report and "min_score_to_pass" in report
