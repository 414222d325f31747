"""Check: intake fields the customer stated vs what the responder extracted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from generator.schemas import Manifest
from judge.checks.base import Check, Rule
from judge.fields import find_statement, values_match
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig


@dataclass(frozen=True)
class FieldAssessment:
    """One intake field the customer stated in the transcript, and how it was extracted."""

    key: str
    label: str
    kind: str
    required: bool
    truth: str
    stated_turn: int
    stated_quote: str
    extracted: str | None
    extracted_turn: int | None
    # The conversation's reference day: what relative dates ("next Tuesday") are counted from.
    today: date | None = None

    @property
    def correct(self) -> bool:
        return self.extracted is not None and values_match(
            self.kind, self.extracted, self.truth, self.today
        )


def last_extracted(case: CaseTranscript) -> dict[str, tuple[str, int]]:
    """Last non-empty extracted value per key, with the turn that produced it."""
    values: dict[str, tuple[str, int]] = {}
    for turn in case.turns:
        for key, value in turn.extracted.items():
            if value.strip():
                values[key] = (value, turn.index)
    return values


def assess_fields(case: CaseTranscript, manifest: Manifest) -> list[FieldAssessment]:
    """Intake fields whose persona value the customer actually stated (others are not judged:
    the customer may never have been asked)."""
    extracted = last_extracted(case)
    today = case.blueprint.reference_date
    assessments: list[FieldAssessment] = []
    for spec in manifest.intake_fields:
        truth = case.blueprint.persona.facts.get(spec.key, "")
        if not truth.strip():
            continue
        for turn in case.turns:
            quote = find_statement(spec.kind, truth, turn.customer, today)
            if quote:
                value, at = extracted.get(spec.key, (None, None))
                assessments.append(
                    FieldAssessment(
                        spec.key,
                        spec.label,
                        spec.kind,
                        spec.required,
                        truth,
                        turn.index,
                        quote,
                        value,
                        at,
                        today,
                    )
                )
                break
    return assessments


class ExtractionAccuracy(Check):
    """Guarantees: for each intake field whose persona value the customer stated, a major
    finding if the responder's last extracted value differs (after kind-aware normalization),
    and a major (required field) or minor (optional field) finding if it was never extracted.
    Dates and times count in any words the customer used: "next Tuesday" stated and extracted
    is the day it means on the blueprint's reference day, "around 11" is 11:00.
    Evidence quotes the customer's words, the extracted value and the persona value literally."""

    rule = Rule(
        "extraction_accuracy",
        "major",
        "deterministic",
        "skill",
        "An intake field the customer stated was extracted wrong, or never.",
        action="Fix intake extraction",
        severity_when={"minor": "when an optional field was never extracted"},
    )
    needs = frozenset({"org", "scenario"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        findings: list[Finding] = []
        for field in assess_fields(case, manifest):
            if field.correct:
                continue
            stated = Evidence(source="customer", quote=field.stated_quote, turn=field.stated_turn)
            truth = Evidence(source="persona", quote=field.truth)
            if field.extracted is None:
                findings.append(
                    self.finding(
                        case,
                        severity="major" if field.required else "minor",
                        turn_index=field.stated_turn,
                        subject=field.stated_quote,  # verbatim; the fingerprint keys the field
                        key=field.key,
                        evidence=[stated, truth],
                        rationale=(
                            f"The customer gave their {field.label.lower()} but the responder "
                            f"never extracted the field '{field.key}'."
                        ),
                        fix_text=(
                            f"Make the intake skill capture '{field.key}' ({field.label}) as soon "
                            "as the customer states it, in any format, and keep it across turns."
                        ),
                        effort="S",
                        confidence=1.0,
                    )
                )
                continue
            findings.append(
                self.finding(
                    case,
                    turn_index=field.extracted_turn,
                    subject=field.extracted,
                    key=field.key,
                    evidence=[
                        Evidence(
                            source="extracted", quote=field.extracted, turn=field.extracted_turn
                        ),
                        stated,
                        truth,
                    ],
                    rationale=(
                        f"The responder extracted {field.label.lower()} '{field.extracted}' but "
                        f"the customer said '{field.stated_quote}'."
                    ),
                    fix_text=(
                        f"Make the intake skill copy '{field.key}' from the customer's own words "
                        "and update it when the customer corrects it; add an example of this "
                        "format to the skill instructions."
                    ),
                    effort="M",
                    confidence=1.0,
                )
            )
        return findings
