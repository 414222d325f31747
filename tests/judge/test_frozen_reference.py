"""Regression: the reference responder's Quick transcripts on the demo org (seeds 1 and 5) as
they were when issue 14 was filed. Judged today, they are no longer PASS_CLEAN: the instruction
leak, the ignored "what would u suggest" and the question loop are each one finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.schemas import Manifest
from judge.actions import top_actions
from judge.engine import judge_case
from judge.gate import verdict
from judge.schemas import CaseTranscript, Finding, JudgeConfig

FROZEN = Path(__file__).resolve().parents[1] / "data" / "frozen"


def _judge(name: str) -> dict[str, list[Finding]]:
    data = json.loads((FROZEN / name).read_text("utf-8"))
    manifest = Manifest.model_validate(data["manifest"])
    config = JudgeConfig(**data["config"])
    return {
        case["case_key"]: judge_case(
            CaseTranscript.model_validate(case), manifest, config=config
        ).findings
        for case in data["cases"]
    }


def _reported(findings: list[Finding]) -> list[str]:
    return [rule for f in findings for rule in [f.rule_id, *f.corroborating]]


@pytest.fixture(scope="module")
def seed1() -> dict[str, list[Finding]]:
    return _judge("demo_quick_seed1_reference.json")


@pytest.fixture(scope="module")
def seed5() -> dict[str, list[Finding]]:
    return _judge("demo_quick_seed5_reference.json")


def test_seed1_is_no_longer_pass_clean(seed1):
    everything = [f for findings in seed1.values() for f in findings]
    assert verdict(everything, budget_stopped=False) == "PASS_WITH_FINDINGS"
    assert top_actions(everything)


def test_the_ignored_suggestion_request_and_the_question_loop_are_one_finding_each(seed1):
    loop = seed1["sc-03"]
    [ignored] = [f for f in loop if f.rule_id == "ignored_question"]
    assert ignored.turn_index == 2 and "what would u suggest" in ignored.subject
    [repeat] = [f for f in loop if f.rule_id == "repeated_question"]
    assert repeat.severity == "major" and repeat.subject == "Which service would you like"
    assert [e.turn for e in repeat.evidence] == [0, 1, 2, 3]


def test_the_policy_follow_up_answered_with_a_skill_instruction_is_one_leak(seed5):
    [leak] = [f for f in seed5["sc-11"] if f.rule_id == "instruction_leak"]
    assert leak.turn_index == 1
    assert "Offer an emergency appointment for pain" in leak.subject
    assert _reported(seed5["sc-11"]).count("instruction_leak") == 1
    # The suggestion request answered with a leaked instruction, then the loop (sc-10).
    assert {"instruction_leak", "repeated_question"} <= set(_reported(seed5["sc-10"]))


def test_no_critical_and_no_rule_reported_twice_on_one_reply(seed1, seed5):
    for findings in [*seed1.values(), *seed5.values()]:
        assert all(f.severity != "critical" for f in findings)
        for turn in {f.turn_index for f in findings}:
            rules = _reported([f for f in findings if f.turn_index == turn])
            assert len(rules) == len(set(rules)), rules
