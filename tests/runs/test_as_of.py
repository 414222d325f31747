"""A run's reference date (issue 31): part of its snapshot, settable from the CLI and the Start
run form, kept by a reused test set, shown in every report format; the settings hash and the
delta's changed settings ignore it, as they ignore the seed."""

from __future__ import annotations

import json
from datetime import date

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from runs import services
from runs.inline import InlineDispatcher
from runs.models import Run
from tests.runs.helpers import AS_OF, qalab_run

pytestmark = pytest.mark.django_db


def _persona_dates(report: dict) -> list[str]:
    return [
        case["persona_facts"].get("preferred_date", "")
        for case in report["cases"]
        if case.get("persona_facts")
    ]


def test_the_as_of_date_is_recorded_and_scenario_dates_count_from_it(demo_org, tmp_path):
    _, report = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "3", "--seed", "8", "--as-of", "2027-03-01",
        "--md", str(tmp_path / "r.md"), "--junit", str(tmp_path / "r.xml"), tmp_path=tmp_path,
    )  # fmt: skip
    run = Run.objects.get(id=report["run_id"])
    assert run.config["as_of"] == report["as_of"] == "2027-03-01"
    assert run.as_of == date(2027, 3, 1)
    assert "as of 2027-03-01" in (tmp_path / "r.md").read_text("utf-8")
    assert 'name="as_of" value="2027-03-01"' in (tmp_path / "r.xml").read_text("utf-8")
    blueprints = [json.loads(a.content) for a in run.artifacts.filter(kind="blueprint")]
    assert blueprints and {b["reference_date"] for b in blueprints} == {"2027-03-01"}


def test_without_as_of_a_run_counts_from_the_day_it_is_created(demo_org):
    with time_machine.travel("2030-02-14T23:59:00Z", tick=False):
        run = services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=3)
    assert run.config["as_of"] == "2030-02-14"
    assert run.as_of == date(2030, 2, 14)


def test_the_settings_hash_and_the_delta_ignore_the_as_of_date(demo_org, tmp_path):
    args = ("--org", "demo", "--inline", "--scenarios", "2", "--seed", "4")
    _, first = qalab_run(*args, "--as-of", "2026-01-10", tmp_path=tmp_path)
    _, second = qalab_run(*args, "--as-of", "2026-06-20", tmp_path=tmp_path)
    assert first["settings_hash"] == second["settings_hash"]
    changed = second["delta"]["changed_inputs"]
    assert changed["settings"] is False and "as_of" not in changed["settings_changed"]
    # Another date is another test set: its scenarios' dates differ.
    assert changed["test_set_identical"] is False


def test_a_reused_test_set_keeps_its_runs_date(demo_org, tmp_path):
    _, first = qalab_run(
        "--org", "demo", "--inline", "--scenarios", "2", "--seed", "8", "--as-of", "2026-05-04",
        tmp_path=tmp_path,
    )  # fmt: skip
    with time_machine.travel("2029-09-09T12:00:00Z", tick=True):
        _, second = qalab_run(
            "--org", "demo", "--inline", "--reuse-artifacts", str(first["run_id"]),
            tmp_path=tmp_path,
        )  # fmt: skip
    assert second["as_of"] == "2026-05-04"
    assert second["delta"]["changed_inputs"]["test_set_identical"] is True
    assert _persona_dates(second) == _persona_dates(first)

    with pytest.raises(CommandError, match="keeps its date") as raised:
        call_command(
            "qalab_run", "--org", "demo", "--inline", "--as-of", "2026-05-05",
            "--reuse-artifacts", str(first["run_id"]),
        )  # fmt: skip
    assert raised.value.returncode == 2
    assert Run.objects.count() == 2  # nothing was created


@pytest.mark.parametrize("value", ["2026-13-01", "next tuesday", "07/12/2026"])
def test_a_bad_as_of_date_is_a_usage_error(demo_org, value):
    # From a shell, argparse turns this error into exit code 2.
    with pytest.raises(CommandError, match=r"--as-of: .* is not a date in the form YYYY-MM-DD"):
        call_command("qalab_run", "--org", "demo", "--inline", "--as-of", value)
    assert not Run.objects.exists()


def test_the_start_form_sets_the_as_of_date_and_the_report_shows_it(admin_client, demo_org):
    response = admin_client.post(
        reverse("admin:runs_run_start"),
        {"organization": demo_org.pk, "preset": "quick", "as_of": AS_OF.isoformat()},
    )
    assert response.status_code == 302
    assert Run.objects.get().as_of == AS_OF

    run = services.run_create(
        organization=demo_org, preset="quick", scenarios=2, seed=1, as_of=date(2026, 2, 27)
    )
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    page = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert "<th>As of (reference date)</th><td><code>2026-02-27</code></td>" in page

    form = admin_client.get(reverse("admin:runs_run_start")).content.decode()
    assert 'name="as_of"' in form and 'type="date"' in form


def test_a_run_made_before_the_date_was_snapshotted_counts_from_its_creation_day(demo_org):
    with time_machine.travel("2026-08-01T10:00:00Z", tick=False):
        run = services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=3)
    del run.config["as_of"]
    assert run.as_of == date(2026, 8, 1)
