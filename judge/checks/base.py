"""Base class of deterministic checks and the catalog entry each one carries: a check is its
rule (id, severity, fix target, thresholds, description) plus a `run` that applies it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from generator.schemas import Manifest
from judge.gate import fingerprint
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from qalab.domain import Effort, FixTarget, Severity

# What a check needs beyond the transcript: the org's ground truth (manifest), the scenario
# (persona facts, expected status) or a knowledge base. A transcript judged from a file may
# lack some of them; checks that need what is missing are skipped and listed.
Need = Literal["org", "scenario", "kb"]
Layer = Literal["deterministic", "llm", "pipeline"]


@dataclass(frozen=True)
class Rule:
    """One entry of the rules catalog: the one place a rule's severity, fix target, thresholds
    and description live. The check reads them to build its findings, the catalog (admin page,
    docs/rules.md) renders them. Texts are templates: `{NAME}` is `thresholds[NAME]`, the very
    constant the check compares with (`{NAME:.0%}` and other format specs work)."""

    id: str
    severity: Severity
    layer: Layer
    fix_target: FixTarget
    description: str
    # The Top 5 title of a group of its findings, written for a person.
    action: str = ""
    # Every other severity or fix target a finding of the rule may carry, and when.
    severity_when: Mapping[Severity, str] = field(default_factory=dict)
    fix_target_when: Mapping[FixTarget, str] = field(default_factory=dict)
    thresholds: Mapping[str, float] = field(default_factory=dict)

    def text(self, template: str) -> str:
        """`template` with every `{NAME}` replaced by its threshold."""
        return template.format(**self.thresholds)

    @property
    def summary(self) -> str:
        """What the rule finds, with its thresholds filled in."""
        return self.text(self.description)

    @property
    def severities(self) -> frozenset[Severity]:
        return frozenset({self.severity, *self.severity_when})

    @property
    def fix_targets(self) -> frozenset[FixTarget]:
        return frozenset({self.fix_target, *self.fix_target_when})

    @property
    def other_severities(self) -> str:
        """'major when ...': each severity other than the default, and when."""
        return _others(self.severity_when, self.text)

    @property
    def other_fix_targets(self) -> str:
        return _others(self.fix_target_when, self.text)


def _others(others: Mapping[str, str], text: Callable[[str], str]) -> str:
    """Values grouped by when they apply: 'kb or skill when ...; pipeline when ...'."""
    by_when: dict[str, list[str]] = {}
    for value, when in others.items():
        by_when.setdefault(when, []).append(value)
    parts = []
    for when, values in by_when.items():
        named = ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]
        parts.append(f"{named} {text(when)}")
    return "; ".join(parts)


class Check:
    """One rule. Subclasses set `rule` (its id is the check id) and implement `run`; findings
    cite the transcript and take their severity and fix target from the rule unless told."""

    rule: ClassVar[Rule | None] = None
    check_id: str = ""
    needs: frozenset[Need] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.rule is not None and "check_id" not in cls.__dict__:
            cls.check_id = cls.rule.id

    @property
    def detector(self) -> str:
        return f"deterministic:{self.check_id}"

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        raise NotImplementedError

    def finding(
        self,
        case: CaseTranscript,
        *,
        turn_index: int | None,
        subject: str,
        evidence: list[Evidence],
        rationale: str,
        fix_text: str,
        effort: Effort,
        confidence: float,
        severity: Severity | None = None,
        fix_target: FixTarget | None = None,
        key: str | None = None,
    ) -> Finding:
        """A finding of this check, with detector name and fingerprint filled in. `subject`
        is verbatim: a span of one of the evidence quotes (or of the text one cites). The
        fingerprint hashes `key` when given (a canonical form of that subject: "€45" -> "money:45
        EUR", an intake field's key), else the subject. Severity and fix target default to the
        rule's; another one must be among those the rule documents (tests/judge/test_rules.py)."""
        if severity is None or fix_target is None:
            if self.rule is None:
                raise ValueError(f"{type(self).__name__} has no rule to take a default from")
            severity = severity or self.rule.severity
            fix_target = fix_target or self.rule.fix_target
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
