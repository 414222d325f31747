"""Judge one case: run every registered deterministic check, then score and pass/fail it."""

from __future__ import annotations

from generator.schemas import Manifest
from judge.checks import all_checks
from judge.schemas import SEVERITY_ORDER, CaseJudgement, CaseTranscript, Finding, JudgeConfig
from judge.scoring import case_passed, case_scores


def run_checks(case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
    """Findings of all checks, most severe first, then by turn; exact duplicates dropped."""
    findings: list[Finding] = []
    seen: set[tuple[str, int | None, str, str]] = set()
    for check in all_checks():
        for finding in check.run(case, manifest, config):
            key = (finding.rule_id, finding.turn_index, finding.fingerprint, finding.severity)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    # Stable sort: within a severity and turn, registry order is kept.
    return sorted(
        findings,
        key=lambda f: (SEVERITY_ORDER[f.severity], -1 if f.turn_index is None else f.turn_index),
    )


def judge_case(
    case: CaseTranscript,
    manifest: Manifest,
    *,
    config: JudgeConfig,
    extra: list[Finding] | None = None,
) -> CaseJudgement:
    """Findings, scores and pass/fail of one case: the deterministic checks, plus `extra`
    (verified LLM findings) whose fingerprint no deterministic finding already has."""
    findings = run_checks(case, manifest, config)
    known = {f.fingerprint for f in findings}
    for finding in extra or []:
        if finding.fingerprint not in known:
            known.add(finding.fingerprint)
            findings.append(finding)
    scores = case_scores(case, findings, manifest)
    return CaseJudgement(
        case_key=case.case_key,
        findings=findings,
        scores=scores,
        passed=case_passed(scores, findings, config),
    )
