"""The delta compares like with like (issue 17): its default baseline is the latest final run of
the same organization, preset and responder, a real bot's; it says which run it picked and why,
names each input that changed, and every format states whether the test set is the same."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from qalab.models import Organization
from runs import services
from runs.inline import InlineDispatcher
from runs.models import Run, RunStatus
from runs.report import report_to_markdown
from runs.report.build import report_build
from runs.report.delta import delta_build, run_get_previous
from tests.factories import bare_run
from tests.runs.helpers import delta_json, report_json, start_run

pytestmark = pytest.mark.django_db

OTHER_BOT = "python:tests.responders:xss"
NO_BASELINE = "No earlier final run of demo · quick · responder reference to compare with"


def _finished(org: Organization, **create: Any) -> Run:
    """A run created with `run_create` keywords (purpose, max_turns, ...), played inline."""
    run = services.run_create(organization=org, preset="quick", **create)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run


def _ended_without_verdict(org: Organization, status: str) -> Run:
    """A locked reference run that errored or was cancelled: final, but with no verdict."""
    return bare_run(
        org,
        status=status,
        seed=18,
        locked_at=timezone.now(),
        error="the responder was unreachable" if status == RunStatus.ERROR else "",
    )


def test_the_default_baseline_skips_other_bots_lab_runs_and_runs_without_a_verdict(
    demo_org: Organization,
) -> None:
    base = start_run(demo_org, scenarios=1)
    # A later reference run, not saved: each run added below must leave its baseline alone.
    later = Run(id=10**9, organization=demo_org, preset="quick", responder_spec="reference")
    assert run_get_previous(run=later) == base
    other_bot = start_run(demo_org, responder=OTHER_BOT, scenarios=1)
    assert run_get_previous(run=later) == base
    canary = start_run(demo_org, responder="canary:invent_price", scenarios=1)
    assert canary.probe == "canary" and run_get_previous(run=later) == base
    selftest = _finished(demo_org, responder_spec="reference", scenarios=1, purpose="selftest")
    assert selftest.probe == "selftest" and selftest.verdict and selftest.locked_at
    assert run_get_previous(run=later) == base
    errored = _ended_without_verdict(demo_org, RunStatus.ERROR)
    assert run_get_previous(run=later) == base
    cancelled = _ended_without_verdict(demo_org, RunStatus.CANCELLED)
    assert run_get_previous(run=later) == base
    assert all(r.locked_at for r in (other_bot, errored, cancelled))

    current = start_run(demo_org, scenarios=1)
    assert run_get_previous(run=current) == base
    delta = delta_json(current)
    assert delta is not None
    assert (delta["previous_run_id"], delta["basis"]) == (base.id, "previous")
    assert delta["basis_reason"] == "latest final run of demo · quick · responder reference"
    assert report_json(current)["delta"] == delta
    # The lab's own runs have no default baseline.
    assert delta_json(selftest) is None and delta_json(canary) is None
    # Picked by hand, any run is compared with, and the delta says so.
    chosen = delta_json(current, other=other_bot)
    assert chosen is not None and chosen["previous_run_id"] == other_bot.id
    assert (chosen["basis"], chosen["basis_reason"]) == ("chosen", "chosen by the reviewer")


def test_no_baseline_when_only_another_bot_ran(demo_org: Organization) -> None:
    start_run(demo_org, responder=OTHER_BOT, scenarios=1)
    run = start_run(demo_org, scenarios=1)
    assert run_get_previous(run=run) is None
    assert delta_json(run) is None
    markdown = report_to_markdown(report_build(run=run))
    assert NO_BASELINE in markdown.split("## Delta", 1)[1]


def test_a_seed_change_alone_is_no_settings_change(demo_org: Organization) -> None:
    first = start_run(demo_org, scenarios=1, seed=18)
    second = start_run(demo_org, scenarios=1, seed=19)
    assert first.settings_hash != second.settings_hash  # the snapshot's hash still covers it
    delta = delta_json(second)
    assert delta is not None and delta["previous_run_id"] == first.id
    changed = delta["changed_inputs"]
    assert changed["settings"] is False and changed["settings_changed"] == []
    assert changed["test_set_identical"] is False  # what the seed changes, said apart
    markdown = report_to_markdown(report_build(run=second)).split("## Delta", 1)[1]
    assert "**Test set different: not paired (different test sets): no significance test.**" in (
        markdown
    )
    assert "Changed inputs: none." in markdown


def test_a_max_turns_change_is_named(demo_org: Organization) -> None:
    first = start_run(demo_org, scenarios=1, seed=18)
    second = _finished(demo_org, responder_spec="reference", scenarios=1, seed=18, max_turns=2)
    assert first.config["max_turns"] != second.config["max_turns"]
    delta = delta_json(second)
    assert delta is not None and delta["previous_run_id"] == first.id
    assert delta["changed_inputs"]["settings"] is True
    assert delta["changed_inputs"]["settings_changed"] == ["max_turns"]
    markdown = report_to_markdown(report_build(run=second)).split("## Delta", 1)[1]
    assert "Changed inputs: settings max_turns." in markdown


def test_a_responder_change_is_named(demo_org: Organization) -> None:
    first = start_run(demo_org, scenarios=1)
    second = start_run(demo_org, responder=OTHER_BOT, reuse_artifacts=first.id)
    delta = delta_build(run=second, other=first)
    assert delta is not None
    changed = delta.changed_inputs
    assert changed.responder is True
    assert changed.settings is False and changed.settings_changed == []
    assert changed.test_set_identical is True
    assert (delta.snapshots.previous.responder, delta.snapshots.current.responder) == (
        "reference",
        OTHER_BOT,
    )
    report = report_build(run=second).model_copy(update={"delta": delta})
    markdown = report_to_markdown(report).split("## Delta", 1)[1]
    assert "(chosen by the reviewer)" in markdown
    assert f"Changed inputs: responder reference → {OTHER_BOT}." in markdown
    assert "**Same test set: no significant change (" in markdown  # one scenario: too few


def _qalab_run(*args: str) -> str:
    out = StringIO()
    try:
        call_command("qalab_run", "--org", "demo", "--inline", *args, stdout=out, stderr=StringIO())
    except CommandError as exc:
        assert exc.returncode in (0, 1), exc  # a FAIL_CRITICAL verdict still prints its summary
    return out.getvalue()


def test_the_cli_and_the_markdown_state_the_test_set(demo_org: Organization) -> None:
    first = _qalab_run("--scenarios", "1", "--seed", "5", "--responder", "reference")
    assert f"delta: {NO_BASELINE}" in first
    first_id = Run.objects.latest("id").id

    same = _qalab_run("--scenarios", "1", "--seed", "5", "--responder", "reference")
    line = next(x for x in same.splitlines() if "delta:" in x)
    assert line.startswith(
        f"  delta: vs run {first_id} (latest final run of demo · quick · responder reference): "
        "same test set · no significant change (0 to fail, 0 to pass, McNemar p = 1.000"
    ), line
    assert line.endswith("no other input changed"), line
    same_id = Run.objects.latest("id").id

    other = _qalab_run("--scenarios", "1", "--seed", "6", "--responder", "reference")
    assert f"delta: vs run {same_id} (" in other and ": test set different · " in other

    # qalab_report prints the Markdown, whose delta section says it too.
    printed = StringIO()
    call_command("qalab_report", str(same_id), stdout=printed)
    section = printed.getvalue().split("## Delta", 1)[1]
    assert f"Versus run {first_id} (latest final run of demo · quick · responder reference)" in (
        section
    )
    assert "**Same test set: no significant change (" in section
