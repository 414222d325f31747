"""Never a verdict on a bot that was not called (issue 34, point 2): an `openai-chat:` bot on
the offline engine is refused at creation (the form, the CLI, `run_create`), unless the stand-in
is asked for (QALAB_OPENAI_CHAT_STAND_IN); such a run is one of the lab's own (`Run.probe`
"stand-in"): the runs list's default view, the trend, the default baseline and triage carry-over
leave it out, and every report format says the bot was not called."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from qalab.models import Organization
from runs import services
from runs.inline import InlineDispatcher
from runs.models import BOT_NOT_CALLED, PURPOSE_STAND_IN, FindingTriage, Run, RunFinding
from runs.report.build import report_build
from runs.report.delta import run_get_previous
from runs.report.junit import report_to_junit
from runs.report.markdown import report_to_markdown
from runs.report.step_summary import report_to_step_summary
from runs.services.carry import triage_decisions
from runs.trends import org_trend, run_sparklines
from tests.runs.bulk import add_severity_findings, bulk_runs

pytestmark = pytest.mark.django_db

SPEC = "openai-chat:gpt-4o-mini?prompt=file:docs/prompts/demo-bot.md&kb=retrieve:4"
LIST = "/admin/runs/run/"


def _stand_in_runs(org: Organization, n: int, **options: Any) -> list[Run]:
    """`n` final runs of an `openai-chat:` bot that the reference bot stood in for."""
    runs = bulk_runs(org, n, responders=(SPEC,), locked=False, **options)
    ids = [r.pk for r in runs]
    Run.objects.filter(pk__in=ids).update(
        source={"purpose": PURPOSE_STAND_IN}, locked_at=timezone.now()
    )
    return list(Run.objects.filter(pk__in=ids).order_by("id"))


# --------------------------------------------------------------------------- refused at creation


def test_run_create_refuses_openai_chat_on_the_offline_engine(demo_org):
    with pytest.raises(ValueError) as caught:
        services.run_create(organization=demo_org, responder_spec=SPEC, scenarios=2, seed=1)
    message = str(caught.value)
    assert "QALAB_LLM_ENGINE" in message and "QALAB_OPENAI_CHAT_STAND_IN" in message
    assert "not be called" in message
    assert not Run.objects.exists()


def test_the_command_line_refuses_it_with_exit_2_and_no_run(demo_org):
    with pytest.raises(CommandError) as caught:
        call_command("qalab_run", "--org", "demo", "--inline", "--responder", SPEC)
    assert caught.value.returncode == 2
    assert "QALAB_LLM_ENGINE" in str(caught.value)
    assert not Run.objects.exists()


def test_the_start_form_refuses_it_with_an_error_and_no_run(admin_client, demo_org):
    page = admin_client.post(
        reverse("admin:runs_run_start"),
        {"organization": demo_org.pk, "preset": "quick", "responder": SPEC},
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "QALAB_LLM_ENGINE" in html and "QALAB_OPENAI_CHAT_STAND_IN" in html
    assert not Run.objects.exists()


def test_other_responders_and_the_openai_engine_are_not_refused(demo_org):
    reference = services.run_create(organization=demo_org, responder_spec="reference", seed=1)
    assert reference.probe == "" and reference.source["purpose"] == "check"
    with override_settings(QALAB_LLM_ENGINE="openai"):
        real = services.run_create(organization=demo_org, responder_spec=SPEC, seed=1)
    assert real.probe == "" and real.source["purpose"] == "check"
    assert set(Run.objects.of_real_bots()) == {reference, real}


@override_settings(QALAB_OPENAI_CHAT_STAND_IN=True)
def test_with_the_opt_in_the_run_is_one_of_the_labs_own(demo_org):
    run = services.run_create(organization=demo_org, responder_spec=SPEC, scenarios=2, seed=1)
    assert run.source["purpose"] == PURPOSE_STAND_IN and run.probe == "stand-in"
    assert not Run.objects.of_real_bots().exists()
    assert list(Run.objects.of_the_lab()) == [run]


# --------------------------------------------------------------------------- never a real bot


def test_the_runs_list_badges_it_and_leaves_it_out_of_real_bots(admin_client, demo_org):
    (real,) = bulk_runs(demo_org, 1)
    (stand_in,) = _stand_in_runs(demo_org, 1)
    default = admin_client.get(LIST).content.decode()
    assert f"/admin/runs/run/{real.pk}/report/" in default
    assert '<span class="qa-badge qa-probe">stand-in</span>' in default
    real_only = admin_client.get(LIST + "?probe=real").content.decode()
    assert f"/admin/runs/run/{stand_in.pk}/report/" not in real_only
    lab = admin_client.get(LIST + "?probe=lab").content.decode()
    assert f"/admin/runs/run/{stand_in.pk}/report/" in lab
    assert '<span class="qa-badge qa-probe">stand-in</span>' in lab


def test_the_trend_and_the_sparklines_leave_it_out(demo_org):
    real = bulk_runs(demo_org, 2, responders=(SPEC,), scores=(0.4,))
    stand_in = _stand_in_runs(demo_org, 2, scores=(1.0,))
    trend = org_trend(runs=Run.objects.all(), organization_id=demo_org.pk)
    assert [p.run_id for p in trend] == [r.pk for r in real]
    spark = run_sparklines(runs=Run.objects.all(), pairs=[(demo_org.pk, SPEC)])
    assert spark[(demo_org.pk, SPEC)].run_ids == tuple(r.pk for r in real)
    assert not set(spark[(demo_org.pk, SPEC)].run_ids) & {r.pk for r in stand_in}


def test_the_default_baseline_skips_it_and_it_has_none(demo_org):
    (base,) = bulk_runs(demo_org, 1, responders=(SPEC,))
    (stand_in,) = _stand_in_runs(demo_org, 1)
    later = Run(id=10**9, organization=demo_org, preset="quick", responder_spec=SPEC)
    assert run_get_previous(run=later) == base
    assert run_get_previous(run=stand_in) is None


def test_triage_on_a_stand_in_run_is_not_carried_to_a_real_bots(demo_org, admin_user):
    (stand_in,) = bulk_runs(demo_org, 1, responders=(SPEC,), locked=False)
    Run.objects.filter(pk=stand_in.pk).update(source={"purpose": PURPOSE_STAND_IN})
    stand_in.refresh_from_db()
    add_severity_findings(stand_in, {"critical": 1})
    finding = RunFinding.objects.get(run=stand_in)
    FindingTriage.objects.create(
        run=stand_in, finding=finding, state="wont_fix", reviewer=admin_user, gate_waived=True
    )
    real = Run(id=10**9, organization=demo_org, preset="quick", responder_spec=SPEC)
    assert triage_decisions(run=real, fingerprints={finding.fingerprint}) == {}
    # Among the lab's own runs it is read back, as a selftest's or a canary's would be.
    lab = Run(
        id=10**9 + 1,
        organization=demo_org,
        preset="quick",
        responder_spec=SPEC,
        source={"purpose": PURPOSE_STAND_IN},
    )
    assert set(triage_decisions(run=lab, fingerprints={finding.fingerprint})) == {
        finding.fingerprint
    }


# --------------------------------------------------------------------------- every format says so


@pytest.fixture
def stand_in_run(demo_org: Organization) -> Run:
    with override_settings(QALAB_OPENAI_CHAT_STAND_IN=True):
        run = services.run_create(
            organization=demo_org, responder_spec=SPEC, scenarios=1, max_turns=2, seed=3
        )
        dispatcher = InlineDispatcher()
        services.run_start(run=run, dispatcher=dispatcher)
        dispatcher.drain()
    run.refresh_from_db()
    assert run.locked_at is not None and run.verdict
    return run


def test_every_format_says_the_bot_was_not_called(admin_client, stand_in_run):
    report = report_build(run=stand_in_run)
    data = report.to_json()
    assert data["bot_called"] is False
    assert data["bot_not_called"] == BOT_NOT_CALLED
    assert "QALAB_OPENAI_CHAT_STAND_IN" in BOT_NOT_CALLED
    assert data["source"]["purpose"] == PURPOSE_STAND_IN
    assert "The bot was not called" in report_to_markdown(report).split("## Findings")[0]
    assert "The bot was not called" in report_to_step_summary(report)
    junit = ET.fromstring(report_to_junit(report).split("\n", 1)[1])
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["bot_called"] == "false"
    assert "The bot was not called" in (junit.findtext("system-out") or "")
    page = admin_client.get(reverse("admin:runs_run_report", args=[stand_in_run.pk]))
    banner = page.content.decode().split('id="qa-progress"', 1)[1].split('class="qa-meter"', 1)[0]
    assert 'id="qa-bot-not-called"' in banner and "The bot was not called" in banner


def test_a_real_bots_report_says_nothing_of_the_kind(admin_client, demo_org):
    run = services.run_create(organization=demo_org, scenarios=1, max_turns=2, seed=3)
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    report = report_build(run=run)
    data = report.to_json()
    assert (data["bot_called"], data["bot_not_called"]) == (True, None)
    assert "not called" not in report_to_markdown(report)
    assert "not called" not in report_to_step_summary(report)
    assert '<property name="bot_called" value="true"' in report_to_junit(report)
    page = admin_client.get(reverse("admin:runs_run_report", args=[run.pk]))
    assert "qa-bot-not-called" not in page.content.decode()


@override_settings(QALAB_OPENAI_CHAT_STAND_IN=True)
def test_the_command_lines_summary_says_the_bot_was_not_called(demo_org, capsys):
    args = ("--org", "demo", "--inline", "--scenarios", "1", "--max-turns", "2", "--seed", "3")
    try:
        call_command("qalab_run", *args, "--responder", SPEC)
    except CommandError as exc:
        assert exc.returncode in (1, 3), exc
    summary = capsys.readouterr().out
    assert summary.splitlines()[1].strip() == BOT_NOT_CALLED
    try:
        call_command("qalab_run", *args)  # the reference bot, a real bot's run
    except CommandError as exc:
        assert exc.returncode in (1, 3), exc
    assert "not called" not in capsys.readouterr().out
