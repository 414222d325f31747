"""Run verdict from findings, and the stable fingerprint that lets the delta match findings."""

from __future__ import annotations

import hashlib
from collections.abc import Collection

from judge.facts import canonical_subject
from judge.schemas import Finding, Verdict


def fingerprint(rule_id: str, subject: str) -> str:
    """sha256 of rule id + normalized subject: '€45', 'EUR 45.00' and '45 EUR' hash the same."""
    key = f"{rule_id.strip().casefold()}\x1f{canonical_subject(subject)}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def verdict(
    findings: list[Finding],
    *,
    budget_stopped: bool,
    errored: bool = False,
    waived: Collection[int] = (),
) -> Verdict:
    """Gate the run.

    - any critical finding -> FAIL_CRITICAL, even when the budget stopped the run: a critical
      found before the stop is never hidden behind BUDGET_STOPPED. `waived` are the indexes of
      findings a reviewer's decision lets pass the gate: they count as findings, not as critical;
    - else budget_stopped -> BUDGET_STOPPED (coverage is incomplete, so no PASS);
    - else any finding -> PASS_WITH_FINDINGS;
    - else errored (some cases could not be run or judged) -> PASS_WITH_FINDINGS: a run with
      missing coverage is never PASS_CLEAN. The orchestrator is expected to add a `pipeline`
      finding per errored case so the report says why;
    - else PASS_CLEAN.
    """
    passed = set(waived)
    if any(f.severity == "critical" for i, f in enumerate(findings) if i not in passed):
        return "FAIL_CRITICAL"
    if budget_stopped:
        return "BUDGET_STOPPED"
    if findings or errored:
        return "PASS_WITH_FINDINGS"
    return "PASS_CLEAN"
