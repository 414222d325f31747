"""A stored finding row as the judge's `Finding` again (the gate, the reviewers' misses and the
judge stage read them back)."""

from __future__ import annotations

from judge.schemas import Finding
from runs.models import RunFinding


def finding_model(row: RunFinding) -> Finding:
    """The judge's finding a stored row holds (validated: a row is only as good as its checks)."""
    return Finding.model_validate(
        {
            "rule_id": row.rule_id,
            "severity": row.severity,
            "case_key": row.case.key if row.case else "",
            "turn_index": row.turn_index,
            "subject": row.subject,
            "evidence": row.evidence,
            "rationale": row.rationale,
            "fix_target": row.fix_target,
            "fix_text": row.fix_text,
            "effort": row.effort,
            "confidence": row.confidence,
            "detector": row.detector,
            "fingerprint": row.fingerprint,
            "confirmed": row.confirmed,
            "corroborating": row.corroborating,
        }
    )
