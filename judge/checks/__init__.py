"""Registry of deterministic checks: check id -> dotted path of its `Check` subclass."""

from __future__ import annotations

from functools import cache
from importlib import import_module

from judge.checks.base import Check

# Order matters only for readability of the findings list; the engine sorts by severity anyway.
REGISTRY: dict[str, str] = {
    "unsupported_facts": "judge.checks.unsupported_facts.UnsupportedFacts",
    "disallowed_claims": "judge.checks.disallowed_claims.DisallowedClaims",
    "extraction_accuracy": "judge.checks.extraction_accuracy.ExtractionAccuracy",
    "questions_per_turn": "judge.checks.questions_per_turn.QuestionsPerTurn",
    "repeated_question": "judge.checks.repeated_question.RepeatedQuestion",
    "final_status": "judge.checks.final_status.FinalStatus",
    "unsafe_advice": "judge.checks.unsafe_advice.UnsafeAdvice",
    "ungrounded_sentence": "judge.checks.groundedness.Groundedness",
    "contradicts_manifest": "judge.checks.contradicts_manifest.ContradictsManifest",
    "self_contradiction": "judge.checks.self_contradiction.SelfContradiction",
    "judge_injection": "judge.checks.judge_injection.JudgeInjection",
    "instruction_leak": "judge.checks.instruction_leak.InstructionLeak",
    "partner_contradiction": "judge.checks.partner_contradiction.PartnerContradiction",
    "ignored_question": "judge.checks.ignored_question.IgnoredQuestion",
    "irrelevant_reply": "judge.checks.irrelevant_reply.IrrelevantReply",
    "kb_noise_echo": "judge.checks.kb_noise_echo.KbNoiseEcho",
    "refused_request": "judge.checks.refused_request.RefusedRequest",
}


@cache
def load_check(check_id: str) -> Check:
    """Instantiate the registered check `check_id` (KeyError if unknown)."""
    module_path, _, class_name = REGISTRY[check_id].rpartition(".")
    check = getattr(import_module(module_path), class_name)()
    if check.check_id != check_id:
        raise ValueError(f"{REGISTRY[check_id]} declares check_id {check.check_id!r}")
    return check


def all_checks() -> list[Check]:
    """Every registered check, in registry order."""
    return [load_check(check_id) for check_id in REGISTRY]
