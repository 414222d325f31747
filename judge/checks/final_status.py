"""Check: the case ended in the status its blueprint expects."""

from __future__ import annotations

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig


class FinalStatus(Check):
    """Guarantees: when the final status (case.actual_status, else the last turn's status)
    differs from blueprint.expected_status, one major finding quoting the last non-empty reply;
    a status never reported at all is a minor finding. No finding without a reply to cite."""

    rule = Rule(
        "final_status",
        "major",
        "deterministic",
        "skill",
        "The final AWAITING_RESPONSE / COMPLETE status differs from the scenario's expected "
        "status.",
        action="Fix the final conversation status",
        severity_when={"minor": "when no status was reported"},
        fix_target_when={
            "pipeline": "when no status was reported, or COMPLETE was reported while required "
            "information was missing (gate COMPLETE on the intake fields)"
        },
    )
    needs = frozenset({"scenario"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        expected = case.blueprint.expected_status
        actual = case.actual_status or next(
            (t.status for t in reversed(case.turns) if t.status), None
        )
        if actual == expected:
            return []
        last = next((t for t in reversed(case.turns) if t.reply.strip()), None)
        if last is None:
            return []
        if actual is None:
            severity, target = "minor", "pipeline"
            rationale = f"The responder never reported a status; {expected} was expected."
            fix = "Make the responder adapter return the conversation status on every turn."
        elif expected == "COMPLETE":
            severity, target = "major", "skill"
            rationale = (
                f"The conversation ended {actual}, but the scenario expected COMPLETE: the "
                "customer provides every required field."
            )
            fix = (
                "Make the booking skill mark the request COMPLETE once every required intake "
                "field is known, and confirm that to the customer."
            )
        else:
            severity, target = "major", "pipeline"
            rationale = (
                f"The conversation was marked {actual} although {expected} was expected "
                "(required information was still missing)."
            )
            fix = (
                "Gate the COMPLETE status in the pipeline on all required intake fields being "
                "extracted, instead of trusting the model's own status."
            )
        return [
            self.finding(
                case,
                severity=severity,
                turn_index=last.index,
                # The reply the conversation ended on, verbatim; the fingerprint keys the
                # status pair.
                subject=last.reply.strip()[:200],
                key=f"expected {expected}, got {actual or 'no status'}",
                evidence=[Evidence(source="reply", quote=last.reply.strip(), turn=last.index)],
                rationale=rationale,
                fix_target=target,
                fix_text=fix,
                effort="M",
                confidence=1.0,
            )
        ]
