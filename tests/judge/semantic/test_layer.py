"""The semantic layer in the judge (issue 32): transcripts written for these tests, of a
business no other test uses (a watch repairer), judged the way `qalab_judge` judges a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.dialogues import DEFAULT_CONFIG, Dialogue, judge_dialogue
from judge.semantic.thresholds import CONFIRM_THRESHOLDS, DEFAULT_THRESHOLDS, threshold

DATA = Path(__file__).resolve().parents[2] / "data" / "semantic" / "watch_repair.jsonl"
OFF = DEFAULT_CONFIG.model_copy(update={"semantic": False})


def _dialogues() -> dict[str, Dialogue]:
    lines = DATA.read_text("utf-8").splitlines()
    return {d.id: d for d in (Dialogue.model_validate(json.loads(line)) for line in lines)}


DIALOGUES = _dialogues()


def _findings(name: str, config=DEFAULT_CONFIG):
    return judge_dialogue(DIALOGUES[name], config=config).findings


def test_a_bot_contradicting_itself_about_what_the_business_does_is_one_critical_finding():
    [finding] = _findings("wr-contradiction")
    assert (finding.rule, finding.severity, finding.turn) == ("self_contradiction", "critical", 5)
    quotes = [e["quote"] for e in finding.evidence]
    assert quotes == [
        "Yes, we repair vintage pocket watches.",
        "We do not repair pocket watches at all, sorry.",
    ]


def test_a_clean_dialogue_quoting_the_kb_verbatim_has_no_finding():
    assert _findings("wr-clean") == []


def test_a_question_answered_with_something_unrelated_is_an_ignored_question():
    findings = _findings("wr-ignored")
    assert {(f.rule, f.turn) for f in findings} >= {("ignored_question", 1)}
    assert all(f.rule == "ignored_question" for f in findings)


def _raw(dialogue: Dialogue, config):
    from judge.dialogues import available_context, empty_manifest, to_case
    from judge.engine import raw_findings

    case, _ = to_case(dialogue, None)
    available = available_context(dialogue, org=False, org_kb=False)
    return case, raw_findings(case, empty_manifest(dialogue), config, available=available)


def test_a_confirmed_finding_carries_the_heads_score_as_its_confidence():
    _, on = _raw(DIALOGUES["wr-ignored"], DEFAULT_CONFIG)
    _, off = _raw(DIALOGUES["wr-ignored"], OFF)
    on_first = next(f for f in on if f.rule_id == "ignored_question" and f.turn_index == 0)
    off_first = next(f for f in off if f.rule_id == "ignored_question" and f.turn_index == 0)
    assert on_first.confidence >= CONFIRM_THRESHOLDS["ignored_question"]
    assert on_first.confidence != off_first.confidence  # the rule's fixed 0.65 is replaced


def _no_kb(turns: list[tuple[str, str]]) -> Dialogue:
    messages = [
        {"role": r, "text": t}
        for pair in turns
        for r, t in zip(("customer", "bot"), pair, strict=True)
    ]
    return Dialogue.model_validate({"id": "chat", "turns": messages})


CHAT = _no_kb(
    [
        ("do you have any pets?", "Yes, I have two dogs and a cat. I love them so much."),
        ("nice! what are their names?", "The dogs are Max and Bella, the cat is Luna."),
        ("cute. do you walk them a lot?", "I don't have any pets, I am allergic to animals."),
    ]
)


def test_in_a_dialogue_with_no_kb_the_head_alone_reports_a_contradiction():
    found = [f for f in judge_dialogue(CHAT).findings if f.rule == "self_contradiction"]
    assert [(f.turn, f.severity) for f in found] == [(5, "major")]
    _, raw = _raw(CHAT, DEFAULT_CONFIG)
    [head] = [f for f in raw if f.rule_id == "self_contradiction"]
    assert head.detector == "semantic:self_contradiction"
    assert head.confidence >= DEFAULT_THRESHOLDS["self_contradiction"]
    off = judge_dialogue(CHAT, config=OFF).findings
    assert not [f for f in off if f.rule == "self_contradiction"]  # the rules alone miss it


def test_a_run_may_raise_a_threshold_so_the_head_alone_reports_less():
    strict = DEFAULT_CONFIG.model_copy(update={"semantic_thresholds": {"self_contradiction": 1.0}})
    found = judge_dialogue(CHAT, config=strict).findings
    assert not [f for f in found if f.rule == "self_contradiction"]
    assert threshold("self_contradiction", {"self_contradiction": 1.0}) == 1.0


@pytest.mark.parametrize("name", sorted(DIALOGUES))
def test_the_layer_off_is_the_deterministic_judge_alone(name):
    """With QALAB_SEMANTIC=off the judge says what its checks say, unconfirmed."""
    from judge.semantic.layer import apply_semantic

    case, raw = _raw(DIALOGUES[name], OFF)
    assert apply_semantic(case, raw, OFF) == raw


ASKED = Dialogue.model_validate(
    {
        "id": "asked",
        "turns": [
            {"role": "customer", "text": "Can I bring my own wine on Saturday, is there corkage?"},
            {"role": "bot", "text": "Yes, bring your own wine on Saturday; ask the manager."},
        ],
    }
)


@pytest.mark.parametrize(
    ("miss", "expected"),
    [
        (0.95, [("ignored_question", ["irrelevant_reply"])]),  # one finding, both rules
        (0.5, []),  # below the head-alone thresholds: nothing
    ],
)
def test_with_no_kb_an_unrelated_reply_is_one_finding_of_both_take_up_rules(
    monkeypatch, miss, expected
):
    """The head alone: at the irrelevant threshold the reply also leaves the question
    unanswered, and the merge makes the two one finding (as reviewers label it)."""
    from judge.semantic import layer

    assert DEFAULT_THRESHOLDS["irrelevant_reply"] <= 0.95
    assert min(DEFAULT_THRESHOLDS["ignored_question"], DEFAULT_THRESHOLDS["irrelevant_reply"]) > 0.5
    monkeypatch.setattr(layer._Scorer, "takeup", lambda self, turn: miss)
    found = judge_dialogue(ASKED).findings
    takeup = [f for f in found if f.rule in ("ignored_question", "irrelevant_reply")]
    assert [(f.rule, f.corroborating) for f in takeup] == expected
    assert all(f.detector.startswith("semantic:") and f.confidence == miss for f in takeup)
