"""The runs list (columns, the lab's own runs, per-row sparklines, a bounded query count) and
an organization's trend page (issue 17). The 1280 px layout check is tests/browser/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from qalab.models import Organization
from runs.models import Run
from runs.report.words import share_pct
from runs.trends import run_sparklines
from tests.factories import make_staff_user
from tests.runs.bulk import add_severity_findings, bulk_runs

pytestmark = pytest.mark.django_db

LIST = "/admin/runs/run/"
HTTP_BOT = "https://bots.example.com/api/v2/clinic-assistant/chat"


def _other_org(slug: str = "other", name: str = "Other Org") -> Organization:
    return Organization.objects.create(slug=slug, name=name, locale="en")


def _rows(html: str) -> dict[int, str]:
    """The list's rows by run id."""
    body = html.split('id="result_list"', 1)[1].split("</table>", 1)[0]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S):
        found = re.search(r'href="/admin/runs/run/(\d+)/report/"', row)
        if found:
            rows[int(found.group(1))] = row
    return rows


def _spark_runs(row: str) -> list[int]:
    found = re.search(r'<svg class="qa-spark"[^>]*data-runs="([\d,]*)"', row)
    assert found, row
    return [int(x) for x in found.group(1).split(",") if x]


def test_the_list_has_the_columns_of_the_story(admin_client, demo_org):
    (run,) = bulk_runs(demo_org, 1, responders=(HTTP_BOT,), scores=(0.834,))
    html = admin_client.get(LIST).content.decode()
    headers = re.findall(
        r'<th scope="col"[^>]*>.*?<div class="text">(?:<a[^>]*>|<span>)(.*?)<', html, re.S
    )
    assert headers == [
        "Run",
        "Organization",
        "Responder",
        "Preset",
        "Verdict",
        "Score",
        "Tokens",
        "Duration",
        "Created",
    ]
    row = _rows(html)[run.pk]
    # The responder is shortened, its full spec in the title.
    assert f'title="{HTTP_BOT}"' in row
    shown = re.search(r'class="qa-responder"[^>]*>([^<]*)<', row).group(1)
    assert len(shown) < len(HTTP_BOT) and shown.startswith("bots.example.com")
    assert ">83%<" in row and 'class="qa-spark"' in row  # a whole percentage, as everywhere
    assert "PASS_WITH_FINDINGS" in row and "12.3k / 100k" in row
    # The organization links to its trend page; a row's run links to its report, once.
    assert reverse("admin:runs_run_trend", args=[demo_org.slug]) in row
    assert "/change/" not in row


def test_the_labs_own_runs_are_marked_by_default_and_split_by_the_filter(admin_client, demo_org):
    (real,) = bulk_runs(demo_org, 1)
    (canary,) = bulk_runs(demo_org, 1, responders=("canary:invent_price",))
    (selftest,) = bulk_runs(demo_org, 1, selftest=True)
    # A run recorded before runs had a purpose (no source.purpose) is a real bot's.
    (legacy,) = bulk_runs(demo_org, 1, locked=False)
    Run.objects.filter(pk=legacy.pk).update(source={})

    default = admin_client.get(LIST).content.decode()
    assert set(_rows(default)) == {real.pk, legacy.pk, canary.pk, selftest.pk}
    assert 'href="?probe=lab"' in default and 'href="?probe=real"' in default

    real_only = _rows(admin_client.get(LIST + "?probe=real").content.decode())
    assert set(real_only) == {real.pk, legacy.pk}

    lab = _rows(admin_client.get(LIST + "?probe=lab").content.decode())
    assert set(lab) == {canary.pk, selftest.pk}
    assert '<span class="qa-badge qa-probe">canary</span>' in lab[canary.pk]
    assert '<span class="qa-badge qa-probe">selftest</span>' in lab[selftest.pk]

    everything = _rows(default)
    assert set(everything) == {real.pk, legacy.pk, canary.pk, selftest.pk}
    assert "qa-probe" not in everything[real.pk]


def test_a_rows_sparkline_is_its_org_and_responders_last_final_real_runs(admin_client, demo_org):
    other = _other_org()
    mine = bulk_runs(demo_org, 12, responders=("reference",), scores=(0.5, 0.6, 0.7))
    bot = bulk_runs(demo_org, 3, responders=(HTTP_BOT,), scores=(0.9,))
    theirs = bulk_runs(other, 3, responders=("reference",), scores=(0.2,))
    lab = bulk_runs(demo_org, 2, responders=("reference",), selftest=True)  # the lab's own
    unscored = bulk_runs(demo_org, 1, responders=("reference",), scores=(None,), status="error")
    running = bulk_runs(demo_org, 1, status="simulating", verdict="", locked=False)

    html = admin_client.get(LIST).content.decode()
    rows = _rows(html)
    last_ten = [r.pk for r in mine[-10:]]
    assert _spark_runs(rows[mine[-1].pk]) == last_ten
    assert _spark_runs(rows[mine[0].pk]) == last_ten  # the pair's trend, on each of its rows
    assert _spark_runs(rows[running[0].pk]) == last_ten  # not itself: it is not final
    assert _spark_runs(rows[unscored[0].pk]) == last_ten
    assert _spark_runs(rows[bot[0].pk]) == [r.pk for r in bot]
    assert _spark_runs(rows[theirs[0].pk]) == [r.pk for r in theirs]
    # The points are those runs' scores, oldest first (22 - 20 x score in a 24 px box).
    ys = re.search(r'class="qa-spark".*?<polyline points="([^"]*)"', rows[mine[-1].pk], re.S)
    scores = [round((22 - float(p.split(",")[1])) / 20, 2) for p in ys.group(1).split()]
    assert scores == [r.score_overall for r in mine[-10:]]
    # The org + preset panel above the list leaves the lab's own runs out too.
    panel = html.split('class="qa-trends', 1)[1].split("</div>", 1)[0]
    labels = re.findall(r"overall score of runs ([\d, ]+):", panel)
    in_panel = {int(x) for label in labels for x in label.split(", ")}
    assert in_panel and not in_panel & {r.pk for r in lab}


def _list_queries(client: Any, query: str = "") -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(LIST + query)
    assert response.status_code == 200
    return len(queries), response.content.decode()


# Measured: 10 queries, with 100 runs as with 10,000 (session, user, "may start a run", the
# org + preset trends, the organization filter's choices, the filtered and the full count, the
# page, the rows' sparklines, the preset filter's choices); the bound leaves a margin of 2.
LIST_QUERY_BOUND = 12


@pytest.mark.parametrize("n", [100, 10_000])
def test_the_list_renders_in_a_bounded_number_of_queries(admin_client, demo_org, n):
    other = _other_org()
    per_org = n // 2
    for org in (demo_org, other):
        bulk_runs(
            org,
            per_org - 2 * (per_org // 20),
            responders=("reference", HTTP_BOT, "python:x:y"),
            scores=(0.4, 0.7, 0.9),
        )
        bulk_runs(org, per_org // 20, responders=("canary:invent_price",))
        bulk_runs(org, per_org // 20, selftest=True)
    assert Run.objects.count() == n

    count, html = _list_queries(admin_client)
    assert len(_rows(html)) == 50  # list_per_page
    assert "qa-probe" in html.split('id="result_list"', 1)[1]  # the newest: the lab's own
    assert count <= LIST_QUERY_BOUND, count
    count, html = _list_queries(admin_client, "?probe=real")
    rows = _rows(html)
    assert len(rows) == 50 and all(_spark_runs(row) for row in rows.values())
    assert "qa-probe" not in html.split('id="result_list"', 1)[1]
    assert count <= LIST_QUERY_BOUND, count


def test_the_query_count_does_not_grow_with_the_runs(admin_client, demo_org):
    bulk_runs(demo_org, 100, responders=("reference", HTTP_BOT))
    small, _ = _list_queries(admin_client)
    bulk_runs(demo_org, 9_900, responders=("reference", HTTP_BOT, "python:x:y", "canary:x"))
    large, html = _list_queries(admin_client)
    assert small == large <= LIST_QUERY_BOUND
    assert 'class="qa-spark"' in html


# --------------------------------------------------------------------------- trend page


def _trend(client: Any, org: Any) -> Any:
    return client.get(reverse("admin:runs_run_trend", args=[org]))


def test_the_trend_page_shows_each_runs_score_and_findings_by_severity(admin_client, demo_org):
    runs = bulk_runs(
        demo_org, 4, responders=("reference", HTTP_BOT), scores=(0.5, 0.9, 0.625), locked=False
    )
    counts = [
        {"critical": 2, "major": 1, "minor": 0},
        {"critical": 0, "major": 0, "minor": 3},
        {"critical": 1, "major": 4, "minor": 2},
        {"critical": 0, "major": 0, "minor": 0},
    ]
    for run, c in zip(runs, counts, strict=True):
        add_severity_findings(run, c)
    Run.objects.filter(pk__in=[r.pk for r in runs]).update(locked_at=runs[0].created_at)
    lab = bulk_runs(demo_org, 2, responders=("canary:invent_price",))  # the lab's own: left out
    _other_run = bulk_runs(_other_org(), 1)[0]

    response = _trend(admin_client, demo_org.slug)
    assert response.status_code == 200
    html = response.content.decode()
    # Under the lab's Content-Security-Policy: no inline script, no inline event handler.
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert re.search(r"<[^>]+\son[a-z]+\s*=", html) is None
    assert all("src=" in tag for tag in re.findall(r"<script\b[^>]*>", html))
    for left_out in (*lab, _other_run):
        assert f"#{left_out.pk}<" not in html and f'data-run="{left_out.pk}"' not in html
    table = html.split('id="qa-trend-table"', 1)[1].split("</table>", 1)[0]
    found = re.findall(
        r'<tr data-run="(\d+)">.*?<td class="qa-n">([\d.]+)%</td>'
        r'<td class="qa-n">(\d+)</td><td class="qa-n">(\d+)</td><td class="qa-n">(\d+)</td>',
        table,
        re.S,
    )
    assert found == [
        (
            str(run.pk),
            share_pct(run.score_overall).removesuffix("%"),
            str(c["critical"]),
            str(c["major"]),
            str(c["minor"]),
        )
        for run, c in zip(runs, counts, strict=True)
    ]
    # The chart holds the same numbers: one point per run, and its findings bars.
    chart = html.split('<svg class="qa-trend-chart"', 1)[1].split("</svg>", 1)[0]
    for run, c in zip(runs, counts, strict=True):
        assert f'data-run="{run.pk}" data-score="{run.score_overall:.4f}"' in chart
        for severity, n in c.items():
            if n:
                assert f'data-run="{run.pk}" data-severity="{severity}" data-count="{n}"' in chart
    # Per responder: both series and their names.
    assert chart.count('class="qa-series"') == 2 and HTTP_BOT in html
    # The id works as well as the slug.
    assert _trend(admin_client, demo_org.pk).content.decode().count('<tr data-run="') == 4


def test_another_organizations_trend_is_a_404(client, django_user_model, demo_org):
    other = _other_org()
    bulk_runs(other, 3)
    user = make_staff_user(django_user_model, perms=("runs.view_run",))
    demo_org.members.add(user)
    client.force_login(user)
    assert _trend(client, demo_org.slug).status_code == 200
    for key in (other.slug, other.pk, "no-such-org", 999_999):
        assert _trend(client, key).status_code == 404, key


def test_the_list_and_the_report_link_to_the_trend(admin_client, demo_org):
    from tests.runs.helpers import start_run

    run = start_run(demo_org, scenarios=1)
    url = reverse("admin:runs_run_trend", args=[demo_org.slug])
    assert f'href="{url}"' in admin_client.get(LIST).content.decode()
    report = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert f'id="qa-trend-link" href="{url}"' in report


def test_the_window_fallback_picks_the_same_runs_as_the_union(demo_org, monkeypatch):
    # SQLite (the demo) cannot LIMIT the arms of a UNION: run_sparklines ranks with a window.
    mine = bulk_runs(demo_org, 14, responders=("reference", HTTP_BOT), scores=(0.3, 0.8))
    bulk_runs(demo_org, 2, selftest=True)
    pairs = [(demo_org.pk, "reference"), (demo_org.pk, HTTP_BOT), (demo_org.pk, "absent")]
    union = run_sparklines(runs=Run.objects.all(), pairs=pairs)
    monkeypatch.setattr(connection.features, "supports_slicing_ordering_in_compound", False)
    window = run_sparklines(runs=Run.objects.all(), pairs=pairs)
    assert union == window
    assert union[(demo_org.pk, "reference")].run_ids == tuple(r.pk for r in mine[::2][-10:])
    assert len(union[(demo_org.pk, HTTP_BOT)].run_ids) == 7 and len(union) == 2
