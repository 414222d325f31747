"""`qalab_selftest`: the lab catches every planted canary fault with the expected rule."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from runs.selftest import EXPECTED_RULES
from runs.simulator import canary


def test_every_fault_has_expected_rules():
    assert set(EXPECTED_RULES) == set(canary.FAULTS)


def test_selftest_detects_every_canary_and_clears_the_reference(demo_org, tmp_path, capsys):
    out = tmp_path / "selftest.json"
    call_command("qalab_selftest", "--seed", "3", "--json", str(out))
    result = json.loads(out.read_text())
    assert result["ok"] is True
    for fault, row in result["faults"].items():
        assert row["cases_showing"], fault  # the Quick set gives every fault a chance to show
        assert row["rate"] >= 0.9, (fault, row)
        # One defect = one finding: a planted fault raises at most 1.5 findings per occurrence.
        assert row["occurrences"] >= len(row["cases_showing"]), fault
        assert 0 < row["findings_per_occurrence"] <= 1.5, (fault, row)
    assert result["reference"]["critical_findings"] == []
    printed = capsys.readouterr().out
    assert "invent_price" in printed and "clean reference responder" in printed
    assert "per occ." in printed


def test_the_top_action_of_a_run_with_a_critical_is_about_it(demo_org):
    from runs.models import Run
    from tests.runs.helpers import report_json

    call_command("qalab_selftest", "--seed", "3", "--fault", "unsafe_advice")
    run = Run.objects.filter(responder_spec="canary:unsafe_advice").latest("id")
    report = report_json(run)
    criticals = [f for f in report["findings"] if f["severity"] == "critical"]
    assert criticals, "the unsafe advice canary must raise a critical"
    first = report["top_actions"][0]
    by_id = {f["id"]: f for f in report["findings"]}
    assert any(by_id[i]["severity"] == "critical" for i in first["finding_ids"])


def test_selftest_fails_loudly_on_an_unknown_org(db):
    with pytest.raises(CommandError, match="no organization"):
        call_command("qalab_selftest", "--org", "nope")


@pytest.mark.django_db
def test_the_labs_own_runs_are_told_apart_from_a_real_bots(demo_org):
    from runs import services
    from runs.models import Run

    real = services.run_create(organization=demo_org, responder_spec="reference", seed=1)
    canary_run = services.run_create(
        organization=demo_org, responder_spec="canary:invent_price", seed=1
    )
    selftest = services.run_create(organization=demo_org, seed=1, purpose="selftest")
    assert (real.probe, canary_run.probe, selftest.probe) == ("", "canary", "selftest")
    assert list(Run.objects.of_real_bots()) == [real]
