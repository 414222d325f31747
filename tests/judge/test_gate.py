"""Verdict rules and fingerprint stability."""

from __future__ import annotations

import re

import pytest

from judge.gate import fingerprint, verdict
from judge.schemas import Evidence, Finding


def make_finding(severity="minor", *, rule_id="questions_per_turn", subject="s", **overrides):
    values = {
        "rule_id": rule_id,
        "severity": severity,
        "case_key": "case-1",
        "turn_index": 0,
        "subject": subject,
        "evidence": [Evidence(source="reply", quote="x", turn=0)],
        "rationale": "r",
        "fix_target": "skill",
        "fix_text": "f",
        "effort": "S",
        "confidence": 1.0,
        "detector": f"deterministic:{rule_id}",
        "fingerprint": fingerprint(rule_id, subject),
    }
    values.update(overrides)
    return Finding(**values)


def test_it_passes_clean_without_findings():
    assert verdict([], budget_stopped=False) == "PASS_CLEAN"


def test_it_passes_with_findings_when_none_is_critical():
    assert verdict([make_finding("major"), make_finding("minor")], budget_stopped=False) == (
        "PASS_WITH_FINDINGS"
    )


def test_it_fails_on_any_critical():
    assert verdict([make_finding("minor"), make_finding("critical")], budget_stopped=False) == (
        "FAIL_CRITICAL"
    )


def test_it_never_hides_a_critical_behind_a_budget_stop():
    assert verdict([make_finding("critical")], budget_stopped=True) == "FAIL_CRITICAL"
    assert verdict([make_finding("major")], budget_stopped=True) == "BUDGET_STOPPED"
    assert verdict([], budget_stopped=True) == "BUDGET_STOPPED"


def test_a_waived_critical_counts_as_a_finding_not_as_critical():
    findings = [make_finding("critical"), make_finding("critical", subject="t")]
    assert verdict(findings, budget_stopped=False, waived={0}) == "FAIL_CRITICAL"
    assert verdict(findings, budget_stopped=False, waived=[0, 1]) == "PASS_WITH_FINDINGS"
    assert verdict(findings, budget_stopped=True, waived={0, 1}) == "BUDGET_STOPPED"


def test_it_never_passes_clean_when_cases_errored():
    assert verdict([], budget_stopped=False, errored=True) == "PASS_WITH_FINDINGS"
    assert verdict([make_finding("critical")], budget_stopped=False, errored=True) == (
        "FAIL_CRITICAL"
    )


@pytest.mark.parametrize("spelling", ["€45", "45 EUR", "EUR 45.00", "money:45 EUR", " 45  euros "])
def test_it_fingerprints_the_same_claim_the_same_in_any_format(spelling):
    assert fingerprint("unsupported_facts", spelling) == fingerprint(
        "unsupported_facts", "money:45 EUR"
    )


def test_it_fingerprints_different_rules_and_values_differently():
    base = fingerprint("unsupported_facts", "money:45 EUR")
    assert fingerprint("unsupported_facts", "money:46 EUR") != base
    assert fingerprint("disallowed_claims", "money:45 EUR") != base
    assert fingerprint("unsupported_facts", "8.30") == fingerprint("unsupported_facts", "08:30")
    assert re.fullmatch(r"[0-9a-f]{64}", base), base  # a sha256 hex digest
