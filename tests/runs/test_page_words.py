"""What the pages say (issue 35, point 3): shares never shown as 100% (or 0%) unless exact, a
bulk triage's note once, the lab's own runs in the list (marked, filterable), why a canary run
has no baseline, every responder kind in the Start run form, and what a staff user who is no
organization's member is told. The 1280 px layout: tests/browser/test_pages_fit.py."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from django.template import Context, Template
from django.urls import reverse

from runs import services
from runs.forms import StartRunForm
from runs.inline import InlineDispatcher
from runs.models import Run
from tests.factories import bare_run, make_staff_user
from tests.runs.bulk import bulk_runs

LIST = "/admin/runs/run/"


def _url(name: str, *args: Any) -> str:
    return reverse(f"admin:runs_run_{name}", args=args)


def _render(source: str, **context: Any) -> str:
    return Template("{% load qalab_format %}" + source).render(Context(context))


def _run(org: Any, **kw: Any) -> Run:
    run = services.run_create(organization=org, preset="quick", scenarios=3, seed=1, **kw)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run


# --------------------------------------------------------------------------- percentages


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.998, "99%"), (1.0, "100%"), (0.004, "1%"), (0.0, "0%"), (0.5, "50%"), (None, "n/a")],
)
def test_a_share_reads_100_or_0_only_when_it_is(value: float | None, shown: str) -> None:
    assert _render("{{ v|pct }}", v=value) == shown


def test_a_share_the_page_does_not_have_is_n_a() -> None:
    # A fixture without metrics (a run made of rows): `m.typo_rate` renders as '' and crashed
    # the report page.
    assert _render("{{ m.typo_rate|pct }}", m={}) == "n/a"


def test_a_share_of_a_total_and_a_change_in_points() -> None:
    assert _render("{{ 99_995|pct_of:100_000 }}") == "99%"
    assert _render("{{ 0|pct_of:0 }}") == "n/a"
    assert [_render("{{ v|pts }}", v=v) for v in (0.004, -0.25, 0.0, 0.0001, -0.0004)] == [
        "+0.4",
        "-25.0",
        "0.0",
        "+&lt;0.1",  # a change, however small, is not shown as none
        "-&lt;0.1",
    ]


def test_long_words_may_wrap_after_underscores_and_stay_escaped() -> None:
    assert _render("{{ v|soft_breaks }}", v="AWAITING_RESPONSE") == "AWAITING_<wbr>RESPONSE"
    assert _render("{{ v|soft_breaks }}", v="<b>a_b</b>") == "&lt;b&gt;a_<wbr>b&lt;/b&gt;"


@pytest.mark.django_db
def test_the_report_and_the_list_never_round_a_run_up_to_100(
    admin_client: Any, demo_org: Any
) -> None:
    run = bare_run(
        demo_org,
        status="done",
        verdict="PASS_WITH_FINDINGS",
        score_overall=0.998,
        score_groundedness=0.004,
        tokens_used=99_999,
        token_budget=100_000,
    )
    page = admin_client.get(_url("report", run.pk)).content.decode()
    scores = page.split('class="qa-scores"', 1)[1].split("</table>", 1)[0]
    assert "<td>99%</td>" in scores and "100%" not in scores
    assert "<td>1%</td>" in scores and "<td>0%</td>" not in scores
    assert "(99%)" in page.split('class="qa-meta"', 1)[1].split("</div>", 1)[0]
    row = admin_client.get(LIST).content.decode().split(f"/admin/runs/run/{run.pk}/report/")[1]
    assert '<span class="qa-score-n">99%</span>' in row.split("</tr>", 1)[0]


# --------------------------------------------------------------------------- notes


@pytest.mark.django_db
def test_a_bulk_triage_note_shows_once_under_its_finding(admin_client: Any, demo_org: Any) -> None:
    run = _run(demo_org, responder_spec="canary:invent_price")
    by_fingerprint: dict[str, list[int]] = {}
    for f in run.findings.order_by("id"):
        by_fingerprint.setdefault(f.fingerprint, []).append(f.id)
    group = max(by_fingerprint.values(), key=len)
    assert len(group) >= 3
    note = "The price list in the KB is a year old."
    admin_client.post(
        _url("triage", run.pk),
        {"finding": [",".join(map(str, group))], "state": "confirmed", "note": note},
    )
    page = admin_client.get(_url("report", run.pk)).content.decode()
    entry = page.split(f'id="finding-{group[0]}"', 1)[1].split("</li>\n  ", 1)[0]
    assert entry.count(note) == 1 and page.count(note) == 1


# --------------------------------------------------------------------------- the lab's own runs


@pytest.mark.django_db
def test_the_labs_own_runs_are_listed_marked_and_filterable(
    admin_client: Any, demo_org: Any
) -> None:
    (real,) = bulk_runs(demo_org, 1)
    (canary,) = bulk_runs(demo_org, 1, responders=("canary:invent_price",))
    (selftest,) = bulk_runs(demo_org, 1, selftest=True)
    url = f"/admin/runs/run/{canary.pk}/report/"

    default = admin_client.get(LIST).content.decode()  # a canary run just started is there
    assert url in default and f"/admin/runs/run/{real.pk}/report/" in default
    row = default.split(url, 1)[1].split("</tr>", 1)[0]
    assert '<span class="qa-badge qa-probe">canary</span>' in row
    note = unescape(default.split('id="qa-lab-note"', 1)[1].split("</p>", 1)[0])
    assert "2 runs on this page are the lab's own" in note
    assert 'href="?probe=real"' in note and "Show real bots only" in note

    real_only = admin_client.get(LIST + "?probe=real").content.decode()
    assert url not in real_only and "qa-lab-note" not in real_only
    assert f"/admin/runs/run/{real.pk}/report/" in real_only
    lab = admin_client.get(LIST + "?probe=lab").content.decode()
    assert url in lab and f"/admin/runs/run/{selftest.pk}/report/" in lab
    assert f"/admin/runs/run/{real.pk}/report/" not in lab
    assert admin_client.get(LIST + "?probe=all").content.decode().count("qa-probe") >= 2


@pytest.mark.django_db
def test_a_canary_runs_delta_says_why_it_has_no_baseline(admin_client: Any, demo_org: Any) -> None:
    first = _run(demo_org, responder_spec="canary:invent_price")
    second = _run(demo_org, responder_spec="canary:invent_price", reuse_artifacts=first.pk)
    page = unescape(admin_client.get(_url("delta", second.pk)).content.decode())
    said = page.split('id="qa-delta"', 1)[1].split("</p>", 1)[0]
    assert f"Run #{second.pk} is a canary run, one of the lab's own" in said
    assert "never have a default baseline and are never one" in said
    assert "No earlier final run" not in said  # there is one: run #first, never a baseline
    assert f"no default baseline: run #{second.pk} is one of the lab's own" in page
    report = unescape(admin_client.get(_url("report", second.pk)).content.decode())
    assert f"Run #{second.pk} is a canary run, one of the lab's own" in report
    # The exports say it in the same words: the Markdown, the CLI summary's delta line, JSON.
    from runs.report import report_to_markdown
    from runs.report.build import report_build
    from runs.report.words import delta_summary

    built = report_build(run=second)
    assert built.probe == "canary" and built.delta is None
    for text in (report_to_markdown(built), delta_summary(built)):
        assert f"Run #{second.pk} is a canary run, one of the lab's own" in text
        assert "No earlier final run" not in text


# --------------------------------------------------------------------------- Start run form


@pytest.mark.django_db
def test_the_responder_help_names_every_kind_with_an_example(settings: Any, demo_org: Any) -> None:
    settings.QALAB_WEB_PYTHON_RESPONDERS = ()
    orgs = type(demo_org).objects.all()
    help_text = str(StartRunForm(organizations=orgs).fields["responder"].help_text)
    for example in (
        "<code>reference</code>",
        "<code>canary:invent_price+wrong_hours</code>",
        "wrong_extraction",  # every planted fault is named
        "<code>openai-chat:MODEL?prompt=file:docs/prompts/NAME.md&amp;kb=retrieve:4</code>",
        "<code>https://bot.example.com/qalab/chat</code>",
    ):
        assert example in help_text
    assert "python:" not in help_text  # the web takes none here

    settings.QALAB_WEB_PYTHON_RESPONDERS = ("python:tests.responders:paced",)
    help_text = str(StartRunForm(organizations=orgs).fields["responder"].help_text)
    assert "<code>python:module:function</code>" in help_text
    assert "python:tests.responders:paced" in help_text


# --------------------------------------------------------------------------- no membership


@pytest.mark.django_db
def test_a_staff_user_of_no_organization_is_told_how_to_get_one(
    client: Any, django_user_model: Any, demo_org: Any
) -> None:
    bulk_runs(demo_org, 2)
    user = make_staff_user(django_user_model, perms=("qalab.start_run",))
    client.force_login(user)
    for url in (LIST, _url("start")):
        page = unescape(client.get(url).content.decode())
        hint = page.split('id="qa-no-membership"', 1)[1].split("</p>", 1)[0]
        assert "not a member of any organization" in hint and "you see no runs" in hint
        assert "A superuser adds members on the organization's page" in hint

    demo_org.members.add(user)
    assert "qa-no-membership" not in client.get(LIST).content.decode()
    assert "qa-no-membership" not in client.get(_url("start")).content.decode()
