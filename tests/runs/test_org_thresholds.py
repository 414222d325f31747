"""A per-organization threshold re-fit (issue 36, point 5, acceptance 4): `qalab_train_heads
--from-triage ORG` re-fits a semantic rule's confirm threshold on the org's triage labels,
stores it with provenance, and changes that org's next run only (its config, its judging, its
delta's changed settings); another org's next run is as before.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judge.dialogues import DEFAULT_CONFIG, Dialogue, judge_dialogue
from qalab.models import Organization
from qalab.org_folder import load_org_folder
from qalab.orgs import organization_import
from runs import services
from runs.models import FindingTriage, OrgJudgeThreshold, Run, RunFinding, TriageState
from runs.report.delta import settings_changed
from runs.services.case_judging import judge_config
from tests.factories import DATA
from tests.runs.helpers import delta_json, start_run

pytestmark = pytest.mark.django_db


def _labelled(run: Run, reviewer: Any, rows: list[tuple[float, bool, str]]) -> None:
    """Add ignored_question findings (score, right, detector) to the judged, unlocked run and
    decide each by hand."""
    case = run.cases.order_by("scenario_key").first()
    assert case is not None
    start = run.findings.count()
    for i, (score, right, detector) in enumerate(rows):
        finding = RunFinding.objects.create(
            run=run,
            case=case,
            position=start + i,
            turn_index=0,
            rule_id="ignored_question",
            severity="major",
            subject=f"question {i}",
            evidence=[],
            rationale="seeded",
            fix_target="prompt",
            fix_text="answer the question",
            effort="S",
            confidence=score,
            detector=detector,
            fingerprint=f"{i:064d}",
        )
        state = TriageState.CONFIRMED if right else TriageState.FALSE_POSITIVE
        FindingTriage.objects.create(run=run, finding=finding, state=state, reviewer=reviewer)


# 20 right at 0.72 and 10 wrong at 0.22, confirmed by the head: every grid threshold up to 0.20
# keeps all 30 (precision 20/30 = 0.67), from 0.25 to 0.70 the 20 right ones (precision 1.0,
# 10 or more kept): the lowest reaching 0.85 is 0.25. Five head-alone findings (a case without
# a KB) labelled wrong at 0.95 are not the confirm threshold's: counted, 0.25 would not reach
# 0.85 (20/25).
CONFIRMED = [(0.72, True, "deterministic:ignored_question")] * 20 + [
    (0.22, False, "deterministic:ignored_question")
] * 10
HEAD_ALONE = [(0.95, False, "semantic:ignored_question")] * 5


def _other_org() -> Organization:
    org, _ = organization_import(context=load_org_folder(DATA / "orgs" / "bike-repair-uk"))
    return org


def test_a_refit_changes_that_orgs_next_run_only(
    demo_org: Organization, django_user_model: Any
) -> None:
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    before = start_run(demo_org, scenarios=1, lock=False)
    _labelled(before, reviewer, CONFIRMED + HEAD_ALONE)
    other = _other_org()
    other_before = services.run_create(organization=other, scenarios=1, seed=3)

    call_command("qalab_train_heads", "--from-triage", demo_org.slug)

    row = OrgJudgeThreshold.objects.get(organization=demo_org)
    assert (row.rule_id, row.threshold) == ("ignored_question", 0.25)
    p = row.provenance
    assert (p["labels"], p["right"], p["kept"], p["precision"]) == (30, 20, 20, 1.0)
    assert p["runs"] == [before.id] and p["floor"] == 0.1
    assert p["command"] == f"qalab_train_heads --from-triage {demo_org.slug}"
    assert p["picked_by"] == "precision >= 0.85" and p["fitted_at"]

    after = start_run(demo_org, scenarios=1)
    semantic = after.config["semantic"]
    assert semantic["confirm_thresholds"] == {"ignored_question": 0.25}
    assert semantic["org_thresholds"]["ignored_question"]["labels"] == 30
    assert judge_config(after).semantic_confirm_thresholds == {"ignored_question": 0.25}
    assert after.settings_hash != before.settings_hash
    changed = ["semantic.confirm_thresholds.ignored_question", "semantic.org_thresholds"]
    assert settings_changed(after.config, before.config) == changed
    delta = delta_json(after, other=before)
    assert delta is not None and delta["changed_inputs"]["settings_changed"] == changed

    other_after = services.run_create(organization=other, scenarios=1, seed=3)
    assert "confirm_thresholds" not in other_after.config["semantic"]
    assert other_after.settings_hash == other_before.settings_hash


def test_too_few_labels_are_refused_and_nothing_is_stored(
    demo_org: Organization, django_user_model: Any
) -> None:
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    run = start_run(demo_org, scenarios=1, lock=False)
    _labelled(run, reviewer, CONFIRMED[:12] + HEAD_ALONE)  # 12 confirmed: under 20
    with pytest.raises(CommandError, match=r"too few labels .*ignored_question 12"):
        call_command("qalab_train_heads", "--from-triage", demo_org.slug)
    assert not OrgJudgeThreshold.objects.exists()
    call_command("qalab_train_heads", "--from-triage", demo_org.slug, "--min-labels", "10")
    assert OrgJudgeThreshold.objects.get(organization=demo_org).provenance["labels"] == 12
    call_command("qalab_train_heads", "--from-triage", demo_org.slug, "--reset")
    assert not OrgJudgeThreshold.objects.exists()


def test_the_labels_never_lower_a_threshold_below_what_they_were_judged_with(
    demo_org: Organization, django_user_model: Any
) -> None:
    """All right: the pick would be the grid's lowest (0.05); the findings were judged at 0.1,
    so nobody saw one scored lower, and the threshold stays at 0.1."""
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    run = start_run(demo_org, scenarios=1, lock=False)
    _labelled(run, reviewer, CONFIRMED[:20])
    call_command("qalab_train_heads", "--from-triage", demo_org.slug, "--dry-run")
    assert not OrgJudgeThreshold.objects.exists()
    call_command("qalab_train_heads", "--from-triage", demo_org.slug)
    assert OrgJudgeThreshold.objects.get(organization=demo_org).threshold == 0.1


def test_the_layer_confirms_at_the_runs_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge reads the snapshotted confirm threshold: a finding its head scores 0.5 is
    kept at 0.4 and dropped at 0.6."""
    import judge.semantic.layer as layer

    monkeypatch.setattr(layer, "takeup_miss", lambda *_args, **_kw: 0.5)
    dialogue = Dialogue.model_validate(
        {
            "id": "d",
            "kb": [{"id": "prices", "title": "Prices", "text": "A haircut costs 30 EUR."}],
            "turns": [
                {"role": "customer", "text": "Hi, how much is a haircut?"},
                {"role": "bot", "text": "Hello! What is your full name?"},
            ],
        }
    )
    found = {}
    for threshold in (0.4, 0.6):
        config = DEFAULT_CONFIG.model_copy(
            update={"semantic_confirm_thresholds": {"ignored_question": threshold}}
        )
        found[threshold] = [
            (f.rule, f.confidence) for f in judge_dialogue(dialogue, config=config).findings
        ]
    assert found == {0.4: [("ignored_question", 0.5)], 0.6: []}
