"""A case's judging deadline (issue 33, point 2): the checks run while the case has CPU time
left (`JudgeConfig.deadline_s`); the rest, and the semantic layer, are skipped and named. The
clock is injected: nothing here reads the wall clock or depends on this machine's speed."""

from __future__ import annotations

from collections.abc import Callable

from judge.checks import REGISTRY
from judge.engine import check_case, judge_case, raw_findings
from tests.judge.factories import demo_manifest, make_case, make_config


def _case():
    return make_case(
        [
            (
                "Hi, how much is a hygiene clean?",
                "A hygiene clean is EUR 99. New patients get 20% off! Name? Phone? Date?",
            )
        ]
    )


def _ticking(step: float) -> Callable[[], float]:
    """A clock that moves `step` seconds each time it is read."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


def test_without_a_deadline_every_check_runs() -> None:
    config = make_config(semantic=False)
    checked = check_case(_case(), demo_manifest(), config, clock=_ticking(100.0))
    assert checked.skipped == []
    assert checked.findings == raw_findings(_case(), demo_manifest(), config)


def test_past_the_deadline_the_remaining_checks_are_skipped_and_named() -> None:
    config = make_config(semantic=False, deadline_s=3.5)
    # Read once at the start, then before each check: checks 1-3 start within 3.5 s.
    checked = check_case(_case(), demo_manifest(), config, clock=_ticking(1.0))
    ids = list(REGISTRY)
    assert checked.skipped == ids[3:]
    every = raw_findings(_case(), demo_manifest(), make_config(semantic=False))
    assert checked.findings == [f for f in every if f.rule_id in ids[:3]]


def test_the_semantic_layer_is_one_more_step_under_the_deadline() -> None:
    config = make_config(semantic=True, deadline_s=len(REGISTRY) + 0.5)
    checked = check_case(_case(), demo_manifest(), config, clock=_ticking(1.0))
    assert checked.skipped == ["semantic"]


def test_the_judgement_says_which_checks_were_skipped() -> None:
    config = make_config(semantic=False, deadline_s=1.5)
    judgement = judge_case(_case(), demo_manifest(), config=config, clock=_ticking(1.0))
    assert judgement.skipped_checks == list(REGISTRY)[1:]
    assert {f.rule_id for f in judgement.findings} <= {"unsupported_facts"}
    full = judge_case(_case(), demo_manifest(), config=make_config(semantic=False))
    assert full.skipped_checks == []
