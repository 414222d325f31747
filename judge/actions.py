"""Top 5 actions: findings grouped into remediation items and ranked by expected value."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from judge.facts import canonical_subject
from judge.rules import rule_for
from judge.schemas import Finding, TopAction
from qalab.domain import SEVERITY_ORDER, Effort, FixTarget

SEVERITY_WEIGHT = {"critical": 10.0, "major": 3.0, "minor": 1.0}
EFFORT_WEIGHT = {"S": 1.0, "M": 2.0, "L": 3.0}
MAX_ACTIONS = 5
# Rules whose subject names what to fix (a fact's kind, an intake field, a claim, a service, an
# error) group by it; every other rule fixes one behaviour whatever its subject (the question
# ignored, the sentence leaked) and groups by rule only.
_BY_SUBJECT = frozenset(
    {
        "unsupported_facts",
        "extraction_accuracy",
        "final_status",
        "disallowed_claims",
        "contradicts_manifest",
        "case_error",
    }
)
_FACT_TITLES = {
    "money": "Stop quoting prices not in the KB",
    "time": "Stop stating times or hours not in the KB",
    "duration": "Stop stating durations not in the KB",
    "percent": "Stop quoting percentages not in the KB",
    "phone": "Stop giving phone numbers not in the KB",
    "email": "Stop giving email addresses not in the KB",
    "url": "Stop giving web addresses not in the KB",
}
# A rule whose fix lies in another layer than its catalog default says so in its title.
_TARGET_TITLES = {("kb_noise_echo", "kb"): "Clean the KB typos and markup the bot repeats"}


@dataclass
class _Group:
    fix_target: FixTarget
    rule_id: str
    family: str
    indexes: list[int] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # The findings no reviewer's decision set aside: they alone rank the group.
    counted: list[Finding] = field(default_factory=list)

    @property
    def ranked(self) -> list[Finding]:
        """What ranks the group: its counted findings, or all of them when every one is waived
        (to order the waived groups among themselves)."""
        return self.counted or self.findings

    @property
    def effort(self) -> Effort:
        # Most common effort; a tie goes to the larger one (plan for the harder fix).
        counts = Counter(f.effort for f in self.findings)
        return max(counts, key=lambda e: (counts[e], EFFORT_WEIGHT[e]))

    @property
    def score(self) -> float:
        weighted = sum(SEVERITY_WEIGHT[f.severity] * f.confidence for f in self.ranked)
        return weighted / EFFORT_WEIGHT[self.effort]

    @property
    def worst(self) -> int:
        return min(SEVERITY_ORDER[f.severity] for f in self.ranked)


def family(finding: Finding) -> str:
    """The part of the subject that decides grouping (a fact's kind, a field key, or nothing)."""
    if finding.rule_id not in _BY_SUBJECT:
        return ""
    # The canonical key ("money:45 EUR", a field key), not the verbatim subject ("€45").
    key = finding.key or finding.subject
    if finding.rule_id == "unsupported_facts":
        return canonical_subject(key).partition(":")[0]
    return key


def _title(group: _Group) -> str:
    count = len(group.findings)
    noun = "finding" if count == 1 else "findings"
    if group.rule_id == "unsupported_facts":
        base = _FACT_TITLES.get(group.family, "Stop stating facts not in the KB")
    elif group.rule_id == "extraction_accuracy":
        base = f"Fix intake extraction of '{group.family}'"
    elif group.rule_id == "final_status":
        base = f"Fix the final status: {group.family}"
    elif group.rule_id == "disallowed_claims":
        base = f"Stop making the disallowed claim '{group.family}'"
    elif (group.rule_id, group.fix_target) in _TARGET_TITLES:
        base = _TARGET_TITLES[(group.rule_id, group.fix_target)]
    else:
        rule = rule_for(group.rule_id)
        base = rule.action if rule and rule.action else f"Fix {group.rule_id}"
        if group.rule_id.startswith("llm:"):
            base += f" ({group.rule_id[4:]})"
    return f"{base} ({count} {noun})"


def _rationale(group: _Group) -> str:
    cases = len({f.case_key for f in group.findings})
    example = max(group.ranked, key=lambda f: (-SEVERITY_ORDER[f.severity], f.confidence))
    waived = len(group.findings) - len(group.counted)
    aside = (
        f" {waived} of them set aside by a reviewer's decision (won't fix / false positive), "
        "ranked below every finding that counts."
        if waived
        else ""
    )
    return (
        f"{len(group.findings)} finding(s) in {cases} case(s), worst "
        f"{example.severity}.{aside} Example: {example.rationale} Fix: {example.fix_text}"
    )


def top_actions(findings: list[Finding], *, waived: Collection[int] = ()) -> list[TopAction]:
    """At most 5 actions: every group holding a critical finding first, then by
    sum(severity weight x confidence) / effort weight.

    Findings are grouped by (fix target, rule, subject family). For a group of one severity the
    score is severity weight x count x mean confidence / effort weight (critical 10, major 3,
    minor 1; effort S 1, M 2, L 3): many minor findings never outrank one critical. Ties: worse
    severity, then more findings, then title.

    `waived`: indexes of findings a reviewer's decision set aside (won't fix / false positive,
    and for a critical one "does not fail the gate"). They still belong to their group, but only
    its other findings rank it, and a group whose findings are all waived ranks below every group
    with a finding that counts toward the gate.
    """
    aside = set(waived)
    groups: dict[tuple[str, str, str], _Group] = {}
    for index, finding in enumerate(findings):
        key = (finding.fix_target, finding.rule_id, family(finding))
        group = groups.setdefault(key, _Group(finding.fix_target, finding.rule_id, key[2]))
        group.indexes.append(index)
        group.findings.append(finding)
        if index not in aside:
            group.counted.append(finding)
    ranked = sorted(
        groups.values(),
        key=lambda g: (
            not g.counted,
            g.worst > 0,
            -g.score,
            g.worst,
            -len(g.findings),
            _title(g),
        ),
    )[:MAX_ACTIONS]
    return [
        TopAction(
            rank=rank,
            title=_title(group),
            target_layer=group.fix_target,
            effort=group.effort,
            rationale=_rationale(group),
            finding_indexes=group.indexes,
        )
        for rank, group in enumerate(ranked, start=1)
    ]
