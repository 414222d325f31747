"""The judge accuracy page in a real browser (issue 36, acceptance 5): a reviewer of org A sees
A's figures and nothing of org B (B's rules, figures, reviewers and links absent; B's page a
404), untrusted text stays inert, and the page fits a 1280 px screen."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from qalab.models import Organization
from tests.browser.helpers import assert_inert, login
from tests.browser.test_pages_fit import _WIDTHS
from tests.factories import bare_run, make_staff_user
from tests.runs.test_accuracy_page import XSS, Seeder, accuracy_url, seed_three_runs

B_NAME = "Zebra Secret Clinic"
B_RULE = "zebra_secret_rule"
B_REVIEWER = "zebra-reviewer"


def _org_b(django_user_model: Any) -> tuple[Organization, list[int]]:
    """Org B, triaged by its own reviewer: 2 right of 7 under a rule A never has."""
    b = Organization.objects.create(slug="zebra-secret", name=B_NAME, locale="en")
    reviewer = django_user_model.objects.create_user(username=B_REVIEWER, password="pw-123456")
    s = Seeder()
    runs = [bare_run(b), bare_run(b)]
    for i in range(7):
        f = s.finding(runs[i % 2], B_RULE, fingerprint=f"zebra-{i}", subject=f"zebra subject {i}")
        s.decide(f, "confirmed" if i < 2 else "false_positive", reviewer)
    return b, [r.pk for r in runs]


def test_a_reviewer_of_org_a_sees_nothing_of_org_b(
    page: Page, live_server: Any, django_user_model: Any, transactional_db: None, settings: Any
) -> None:
    settings.QALAB_JUDGE_PRECISION_MIN_LABELS = 3  # so A's and B's rules are flagged
    a = Organization.objects.create(slug="acme-dental", name="Acme Dental", locale="en")
    user = make_staff_user(django_user_model, username="a-reviewer", perms=("runs.view_run",))
    a.members.add(user)
    seeded = seed_three_runs(a, user)
    b, b_runs = _org_b(django_user_model)
    login(page, "a-reviewer", "pw-123456")

    # Reached from A's report, as a reviewer would.
    page.goto(f"/admin/runs/run/{seeded['runs'][0].pk}/report/")
    page.locator("#qa-accuracy-link").click()
    page.wait_for_url(f"**{accuracy_url(a)}")
    expect(page.locator("#qa-accuracy-rules tr[data-rule]")).to_have_count(4)
    expect(page.locator('#qa-accuracy-rules tr[data-rule="unsupported_facts"]')).to_contain_text(
        "3 / 4"
    )
    expect(page.locator('section.qa-flagged[data-rule="ignored_question"] a')).to_have_count(3)

    for url in (accuracy_url(a), accuracy_url(a, "?runs=lab")):
        page.goto(url)
        html = page.content()
        for secret in (B_NAME, b.slug, B_RULE, B_REVIEWER, "zebra subject", "2 / 7", "29%"):
            assert secret not in html, (url, secret)
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map((e) => e.href)")
        assert not [h for h in hrefs for r in b_runs if f"/run/{r}/" in h], url
    # The subject a bot's reply put in a finding is shown as text and runs nothing.
    page.goto(accuracy_url(a))
    assert_inert(page, XSS)

    # B's page, by slug or id, whichever runs: a 404.
    for key in (b.slug, str(b.pk)):
        for query in ("", "?runs=lab"):
            response = page.goto(accuracy_url(key, query))
            assert response is not None and response.status == 404, (key, query)
            assert B_RULE not in page.content() and B_NAME not in page.content()

    # At 1280 x 800 with the navigation open the page does not scroll sideways.
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(accuracy_url(a))
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    widths = page.evaluate(_WIDTHS)
    assert widths["page"] <= widths["client"] and not widths["inner"], widths
