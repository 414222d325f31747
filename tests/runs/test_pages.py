"""The review pages: case view, triage, promote, cancel, delta, exports, trends; permissions,
per-organization isolation and CSRF (query counts: tests/runs/test_review.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from runs import services
from runs.inline import InlineDispatcher
from runs.models import FindingTriage, PromotedFixture, Run, RunStatus
from tests.factories import make_staff_user

pytestmark = pytest.mark.django_db


def _finished_run(org: Any, *, scenarios: int = 3, **kw: Any) -> Run:
    run = services.run_create(organization=org, preset="quick", scenarios=scenarios, seed=1, **kw)
    d = InlineDispatcher()
    services.run_start(run=run, dispatcher=d)
    d.drain()
    run.refresh_from_db()
    return run


@pytest.fixture
def canary_run(demo_org: Any) -> Run:
    run = _finished_run(demo_org, responder_spec="canary:invent_price")
    assert run.findings.filter(rule_id="unsupported_facts").exists()
    return run


@pytest.fixture
def fixtures_dir(settings: Any, tmp_path: Path) -> Path:
    folder = tmp_path / "kb-fixtures"
    settings.QALAB_FIXTURES_DIR = folder
    return folder


def _url(name: str, *args: Any) -> str:
    return reverse(f"admin:runs_run_{name}", args=args)


def _other_org() -> Any:
    from qalab.models import Organization

    return Organization.objects.create(slug="other", name="Other Org", locale="en")


def test_the_case_view_highlights_each_quoted_evidence_in_its_turn(admin_client, canary_run):
    finding = canary_run.findings.filter(rule_id="unsupported_facts").first()
    quote = next(ev["quote"] for ev in finding.evidence if ev["source"] == "reply")
    page = admin_client.get(_url("case", canary_run.pk, finding.case.scenario_key)).content.decode()
    assert f'id="turn-{finding.turn_index}"' in page
    turn_html = page.split(f'id="turn-{finding.turn_index}"', 1)[1].split('class="qa-turn"', 1)[0]
    assert 'class="qa-evidence"' in turn_html
    cited_by = [
        value.split() for value in re.findall(r'data-findings="([^"]*)"', turn_html)
    ]  # each evidence mark lists the ids of the findings that cite it
    assert any(str(finding.pk) in ids for ids in cited_by), cited_by
    assert quote.split()[0] in turn_html
    assert 'id="qa-fields"' in page and 'id="qa-fixture"' in page
    assert "Promote fixture" in page  # the admin holds every permission


def test_the_case_view_shows_persona_facts_next_to_extracted_fields(admin_client, demo_org):
    run = _finished_run(demo_org, responder_spec="canary:wrong_extraction")
    case = run.cases.filter(findings__rule_id="extraction_accuracy").first()
    assert case is not None
    page = admin_client.get(_url("case", run.pk, case.scenario_key)).content.decode()
    table = page.split('id="qa-fields"', 1)[1].split("</table>", 1)[0]
    assert 'class="qa-bad"' in table  # the planted wrong extraction
    assert "✘" in table


def test_triage_records_state_note_reviewer_and_shows_counts(admin_client, canary_run):
    ids = list(canary_run.findings.values_list("pk", flat=True)[:2])
    response = admin_client.post(
        _url("triage", canary_run.pk),
        {"finding": ids, "state": "false_positive", "note": "the KB has it"},
    )
    assert response.status_code == 302
    rows = FindingTriage.objects.filter(finding_id__in=ids)
    assert rows.count() == 2
    assert {r.state for r in rows} == {"false_positive"}
    assert {r.reviewer.username for r in rows} == {"admin"}
    page = admin_client.get(_url("report", canary_run.pk)).content.decode()
    assert "2 finding(s) marked false positive." in page
    counts = page.split('class="qa-triage-counts"', 1)[1].split("</p>", 1)[0]
    assert "False positive 2" in counts
    assert "the KB has it" in page
    # The newest decision wins; the old one stays as history.
    admin_client.post(_url("triage", canary_run.pk), {"finding": ids[:1], "state": "fixed"})
    report = json.loads(admin_client.get(_url("export_json", canary_run.pk)).content)
    states = {f["id"]: f["triage"]["state"] for f in report["findings"]}
    assert states[ids[0]] == "fixed" and states[ids[1]] == "false_positive"
    assert FindingTriage.objects.filter(finding_id=ids[0]).count() == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"state": "fixed"}, "select at least one finding"),
        ({"finding": ["x"], "state": "fixed"}, "whole numbers"),
        ({"finding": ["1"], "state": "gone"}, "Select a valid choice"),
    ],
)
def test_bad_triage_input_is_a_clear_error_and_records_nothing(
    admin_client, canary_run, data, message
):
    response = admin_client.post(_url("triage", canary_run.pk), data, follow=True)
    assert message in response.content.decode()
    assert FindingTriage.objects.count() == 0


def test_triage_of_a_finding_of_another_run_is_refused(admin_client, demo_org, canary_run):
    other = _finished_run(demo_org, responder_spec="canary:invent_price")
    foreign = other.findings.first().pk
    response = admin_client.post(
        _url("triage", canary_run.pk), {"finding": [foreign], "state": "fixed"}, follow=True
    )
    assert "Nothing triaged" in response.content.decode()
    assert FindingTriage.objects.count() == 0


def test_promote_writes_the_fixture_once_and_says_where_it_is(
    admin_client, canary_run, fixtures_dir
):
    case = canary_run.cases.first()
    response = admin_client.post(_url("promote", canary_run.pk, case.scenario_key), follow=True)
    promotion = PromotedFixture.objects.get()
    written = Path(promotion.path)
    assert written.parent == fixtures_dir.resolve() and written.is_file()
    assert f"Fixture written to {written}" in response.content.decode()
    text = written.read_text()
    assert f"run: {canary_run.pk}" in text and f"case: {case.scenario_key}" in text
    again = admin_client.post(_url("promote", canary_run.pk, case.scenario_key), follow=True)
    assert f"already promoted to {written}" in again.content.decode()
    assert len(list(fixtures_dir.iterdir())) == 1
    page = admin_client.get(_url("case", canary_run.pk, case.scenario_key)).content.decode()
    assert "Promoted to" in page and str(written) in page


def test_promote_into_a_symlinked_folder_is_refused_with_a_message(
    admin_client, canary_run, settings, tmp_path
):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "kb-fixtures"
    link.symlink_to(target, target_is_directory=True)
    settings.QALAB_FIXTURES_DIR = link
    case = canary_run.cases.first()
    response = admin_client.post(_url("promote", canary_run.pk, case.scenario_key), follow=True)
    assert "Fixture not promoted" in response.content.decode()
    assert "symlink" in response.content.decode()
    assert list(target.iterdir()) == []
    assert PromotedFixture.objects.count() == 0


def test_permissions_per_action(client, django_user_model, canary_run, fixtures_dir):
    user = make_staff_user(django_user_model)
    canary_run.organization.members.add(user)
    client.force_login(user)
    case = canary_run.cases.first()
    finding = canary_run.findings.first()
    assert client.get(_url("report", canary_run.pk)).status_code == 200
    assert client.get(_url("case", canary_run.pk, case.scenario_key)).status_code == 200
    page = client.get(_url("case", canary_run.pk, case.scenario_key)).content.decode()
    assert "Promote fixture" not in page
    assert client.post(_url("promote", canary_run.pk, case.scenario_key)).status_code == 403
    assert not fixtures_dir.exists() or not list(fixtures_dir.iterdir())
    triage = {"finding": [finding.pk], "state": "fixed"}
    assert client.post(_url("triage", canary_run.pk), triage).status_code == 403
    assert client.post(_url("cancel", canary_run.pk)).status_code == 403
    assert client.get(_url("start")).status_code == 403
    assert FindingTriage.objects.count() == 0 and PromotedFixture.objects.count() == 0


def test_a_member_of_another_organization_sees_none_of_its_pages(
    client, django_user_model, canary_run
):
    other = _other_org()
    user = make_staff_user(
        django_user_model,
        perms=("qalab.start_run", "qalab.triage_finding", "qalab.promote_fixture"),
    )
    other.members.add(user)
    client.force_login(user)
    run, case = canary_run, canary_run.cases.first()
    for url in (
        _url("report", run.pk),
        _url("case", run.pk, case.scenario_key),
        _url("delta", run.pk),
        _url("export_json", run.pk),
        _url("export_md", run.pk),
    ):
        assert client.get(url).status_code == 404, url
    for url, data in (
        (_url("triage", run.pk), {"finding": [run.findings.first().pk], "state": "fixed"}),
        (_url("promote", run.pk, case.scenario_key), {}),
        (_url("cancel", run.pk), {}),
    ):
        assert client.post(url, data).status_code == 404, url
    listing = client.get(reverse("admin:runs_run_changelist")).content.decode()
    assert f"#{run.pk}<" not in listing
    # Nor can it reuse that organization's test set.
    response = client.post(
        _url("start"), {"organization": other.pk, "preset": "quick", "same_test_set_as": run.pk}
    )
    assert response.status_code == 200 and f"No run #{run.pk}" in response.content.decode()
    assert FindingTriage.objects.count() == 0 and PromotedFixture.objects.count() == 0


def test_every_state_changing_action_needs_post_and_csrf(django_user_model, canary_run):
    admin = django_user_model.objects.create_superuser("root", "r@example.com", "pw")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin)
    case = canary_run.cases.first()
    actions = [
        (_url("triage", canary_run.pk), {"finding": [canary_run.findings.first().pk]}),
        (_url("promote", canary_run.pk, case.scenario_key), {}),
        (_url("cancel", canary_run.pk), {}),
        (_url("start"), {"organization": canary_run.organization_id, "preset": "quick"}),
    ]
    for url, data in actions:
        assert strict.post(url, data).status_code == 403, url  # no CSRF token
        if "start" not in url:
            assert strict.get(url).status_code == 405, url
    assert Run.objects.count() == 1 and FindingTriage.objects.count() == 0


def test_cancel_ends_a_running_run_cleanly(admin_client, demo_org):
    run = services.run_create(organization=demo_org, preset="quick", scenarios=3, seed=1)
    page = admin_client.get(_url("report", run.pk)).content.decode()
    assert "Cancel run" in page and 'data-confirm="Cancel run' in page  # asks first (report.js)
    response = admin_client.post(_url("cancel", run.pk), follow=True)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and not run.verdict
    content = response.content.decode()
    assert f"Run #{run.pk} cancelled." in content and "CANCELLED" in content
    assert "Cancel run" not in content
    # The pipeline's stages find it cancelled and do nothing.
    d = InlineDispatcher()
    services.run_start(run=run, dispatcher=d)
    d.drain()
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.cases.count() == 0
    again = admin_client.post(_url("cancel", run.pk), follow=True).content.decode()
    assert "can no longer be cancelled" in again


def test_the_progress_fragment_lists_cases_and_tokens(admin_client, demo_org):
    run = services.run_create(organization=demo_org, preset="quick", scenarios=3, seed=1)
    d = InlineDispatcher()
    services.run_start(run=run, dispatcher=d)
    d.run_next()  # generate only: the cases exist and wait
    run.refresh_from_db()
    fragment = admin_client.get(_url("report", run.pk), headers={"HX-Request": "true"})
    html = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in html
    assert html.count("data-case=") == 3
    assert 'class="qa-cases-done">0 / 3' in html
    assert "tokens" in html and "Cancel run" in html


def test_delta_against_the_default_baseline_and_a_chosen_one(admin_client, demo_org):
    first = _finished_run(demo_org)
    second = _finished_run(demo_org, responder_spec="canary:invent_price", reuse_artifacts=first.pk)
    # A canary run has no default baseline: the page says why; the reviewer picks one.
    assert f"Run #{second.pk} is a canary run, one of the lab&#x27;s own" in (
        admin_client.get(_url("delta", second.pk)).content.decode()
    )
    page = admin_client.get(_url("delta", second.pk) + f"?against={first.pk}").content.decode()
    assert 'id="qa-delta"' in page
    assert "chosen run: chosen by the reviewer" in page
    assert "Test set (fixtures, manifest, scenarios): <strong>identical</strong>" in page
    assert "Responder: <strong>changed</strong>" in page
    assert "Settings: same" in page  # the responder is named apart, the reused run is no setting
    new = page.split("<h3>New", 1)[1].split("</section>", 1)[0]
    assert "unsupported_facts" in new
    verdict = page.split('class="qa-delta-verdict"', 1)[1].split("</p>", 1)[0]
    assert first.verdict in verdict and "FAIL_CRITICAL" in verdict

    # A later run of the reference bot: its default baseline is the first (the canary run is
    # skipped); the select marks it and lists the canary run among the lab's own runs.
    third = _finished_run(demo_org)
    page = admin_client.get(_url("delta", third.pk)).content.decode()
    assert f'vs <a href="{_url("report", first.pk)}">#{first.pk}' in page
    assert "default baseline: latest final run of demo · quick · responder reference" in page
    choose = page.split('name="against"', 1)[1].split("</select>", 1)[0]
    real, lab = choose.split('<optgroup label="The lab', 1)
    assert f'<option value="{first.pk}">#{first.pk} · quick · {first.verdict} · reference' in real
    assert f"the default baseline, #{first.pk}" in real and "· default baseline</option>" in real
    assert f'<option value="{second.pk}">#{second.pk} · canary · quick · FAIL_CRITICAL' in lab
    assert f'value="{second.pk}"' not in real

    chosen = admin_client.get(_url("delta", third.pk) + f"?against={second.pk}").content.decode()
    assert "chosen run" in chosen and f'vs <a href="{_url("report", second.pk)}">#{second.pk}' in (
        chosen
    )
    assert "Responder: <strong>changed</strong>" in chosen
    assert admin_client.get(_url("delta", third.pk) + "?against=999999").status_code == 404


def test_delta_without_an_earlier_run_says_so(admin_client, demo_org):
    run = _finished_run(demo_org)
    page = admin_client.get(_url("delta", run.pk)).content.decode()
    assert "No earlier final run of demo · quick · responder reference to compare with" in page
    report = admin_client.get(_url("report", run.pk)).content.decode()
    assert "No earlier final run of demo · quick · responder reference yet" in report


def test_exports_download_the_json_and_markdown_reports(admin_client, canary_run):
    response = admin_client.get(_url("export_json", canary_run.pk))
    assert response["Content-Disposition"] == (
        f'attachment; filename="qalab-run-{canary_run.pk}.json"'
    )
    report = json.loads(response.content)
    assert report["run_id"] == canary_run.pk and report["findings"]
    md = admin_client.get(_url("export_md", canary_run.pk))
    assert md["Content-Type"].startswith("text/markdown")
    assert f"qalab-run-{canary_run.pk}.md" in md["Content-Disposition"]
    assert canary_run.verdict in md.content.decode()
    page = admin_client.get(_url("report", canary_run.pk)).content.decode()
    assert 'id="qa-export-json"' in page and 'id="qa-export-md"' in page


def test_the_runs_list_shows_a_score_trend_per_org_and_preset(admin_client, demo_org):
    _finished_run(demo_org)
    _finished_run(demo_org, responder_spec="canary:invent_price")
    page = admin_client.get(reverse("admin:runs_run_changelist")).content.decode()
    assert 'class="qa-sparkline"' in page
    assert demo_org.name in page.split('class="qa-trends', 1)[1].split("</div>", 1)[0]
    assert "Duration" in page and "Tokens used / budget" in page
    index = admin_client.get(reverse("admin:index")).content.decode()
    assert "AI QA Lab" in index and _url("start") in index


def test_repeated_findings_are_one_entry_triaged_together(admin_client, canary_run):
    from runs.report.build import report_build
    from runs.report.page import finding_groups

    report = report_build(run=canary_run)
    findings = report.findings
    groups = finding_groups(report)
    assert sum(len(g.items) for g in groups) == len(findings)
    assert len(groups) < len(findings)  # the same invented price in every reply is one issue
    big = max(groups, key=lambda g: len(g.items))
    assert len({f.fingerprint for f in big.items}) == 1
    page = admin_client.get(_url("report", canary_run.pk)).content.decode()
    assert page.count('class="qa-finding ') == len(groups)
    assert f'value="{big.ids}"' in page
    for f in big.items:
        assert f'id="occ-{f.id}"' in page
    admin_client.post(_url("triage", canary_run.pk), {"finding": [big.ids], "state": "fixed"})
    assert FindingTriage.objects.filter(state="fixed").count() == len(big.items)
    one = big.items[0].id
    admin_client.post(_url("triage", canary_run.pk), {"finding": [one], "state": "confirmed"})
    page = admin_client.get(_url("report", canary_run.pk)).content.decode()
    assert f"mixed: {len(big.items) - 1} fixed, 1 confirmed" in page


def test_the_verdict_reason_counts_distinct_critical_issues(admin_client, canary_run):
    criticals = canary_run.findings.filter(severity="critical")
    distinct = len(set(criticals.values_list("fingerprint", flat=True)))
    assert distinct < criticals.count()  # the same invented price in several replies
    expected = f"{criticals.count()} critical findings ({distinct} distinct)"
    assert canary_run.verdict_reason.startswith(expected)
    page = admin_client.get(_url("report", canary_run.pk)).content.decode()
    assert expected in page


def test_a_finding_is_triaged_from_the_case_view_and_returns_there(admin_client, canary_run):
    finding = canary_run.findings.first()
    key = finding.case.scenario_key
    page = admin_client.get(_url("case", canary_run.pk, key)).content.decode()
    assert 'class="qa-triage-one"' in page and f'name="case" value="{key}"' in page
    response = admin_client.post(
        _url("triage", canary_run.pk),
        {"finding": [finding.pk], "state": "wont_fix", "note": "known", "case": key},
    )
    assert response["Location"] == _url("case", canary_run.pk, key) + f"#finding-{finding.pk}"
    page = admin_client.get(_url("case", canary_run.pk, key)).content.decode()
    assert "Triage history (1)" in page and "known" in page
    # A case key of no case of this run falls back to the report.
    response = admin_client.post(
        _url("triage", canary_run.pk),
        {"finding": [finding.pk], "state": "open", "case": "../elsewhere"},
    )
    assert response["Location"].startswith(_url("report", canary_run.pk))


def test_a_reviewer_without_triage_permission_sees_no_triage_forms(
    client, django_user_model, canary_run
):
    user = make_staff_user(django_user_model)
    canary_run.organization.members.add(user)
    client.force_login(user)
    key = canary_run.cases.first().scenario_key
    assert (
        'class="qa-triage-one"' not in client.get(_url("case", canary_run.pk, key)).content.decode()
    )
    assert 'id="qa-triage"' not in client.get(_url("report", canary_run.pk)).content.decode()


def test_every_lab_page_sends_a_script_policy_and_has_no_inline_script(admin_client, canary_run):
    case = canary_run.cases.first()
    queued = services.run_create(organization=canary_run.organization, scenarios=1, seed=1)
    for url in (
        _url("report", queued.pk),  # a run still going: its Cancel form asks to confirm
        reverse("admin:runs_run_changelist"),
        _url("start"),
        _url("report", canary_run.pk),
        _url("case", canary_run.pk, case.scenario_key),
        _url("delta", canary_run.pk),
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        policy = response["Content-Security-Policy"]
        script_src = re.search(r"script-src ([^;]*)", policy).group(1)
        assert script_src.split() == ["'self'"], policy
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        html = response.content.decode()
        assert re.search(r"<[^>]+\son[a-z]+\s*=", html) is None, url  # no inline handlers
        inline = [
            tag
            for tag in re.findall(r"<script\b[^>]*>", html)
            if "src=" not in tag and "application/json" not in tag
        ]
        assert inline == [], url
    assert (
        'data-confirm="Cancel run' in admin_client.get(_url("report", queued.pk)).content.decode()
    )
