"""Base class of deterministic checks: a check id, a `run`, and a helper that builds findings."""

from __future__ import annotations

from typing import Literal

from generator.schemas import Manifest
from judge.gate import fingerprint
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from qalab.domain import Effort, FixTarget, Severity

# What a check needs beyond the transcript: the org's ground truth (manifest), the scenario
# (persona facts, expected status) or a knowledge base. A transcript judged from a file may
# lack some of them; checks that need what is missing are skipped and listed.
Need = Literal["org", "scenario", "kb"]


class Check:
    """One rule. Subclasses set `check_id` and implement `run`; findings cite the transcript."""

    check_id: str = ""
    needs: frozenset[Need] = frozenset()

    @property
    def detector(self) -> str:
        return f"deterministic:{self.check_id}"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        raise NotImplementedError

    def finding(
        self,
        case: CaseTranscript,
        *,
        severity: Severity,
        turn_index: int | None,
        subject: str,
        evidence: list[Evidence],
        rationale: str,
        fix_target: FixTarget,
        fix_text: str,
        effort: Effort,
        confidence: float,
        key: str | None = None,
    ) -> Finding:
        """A finding of this check, with detector name and fingerprint filled in. `subject`
        is verbatim: a span of one of the evidence quotes (or of the text one cites). The
        fingerprint hashes `key` when given (a canonical form of that subject: "€45" -> "money:45
        EUR", an intake field's key), else the subject."""
        return Finding(
            rule_id=self.check_id,
            severity=severity,
            case_key=case.case_key,
            turn_index=turn_index,
            subject=subject,
            key=key or subject,
            evidence=evidence,
            rationale=rationale,
            fix_target=fix_target,
            fix_text=fix_text,
            effort=effort,
            confidence=confidence,
            detector=self.detector,
            fingerprint=fingerprint(self.check_id, key or subject),
        )
