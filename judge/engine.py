"""Judge one case: run every registered deterministic check, then score and pass/fail it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from generator.schemas import Manifest
from judge.checks import REGISTRY, all_checks
from judge.checks.base import Need
from judge.evidence import verify_findings
from judge.merge import merge_findings
from judge.schemas import CaseJudgement, CaseTranscript, Finding, JudgeConfig, Turn
from judge.scoring import case_passed, case_scores
from judge.semantic.layer import apply_semantic
from qalab.domain import SEVERITY_ORDER

EVERYTHING: frozenset[Need] = frozenset({"org", "scenario", "kb"})
# Rule ids in registry order (LLM and pipeline rules after them): ties in a merge go to the
# earlier rule.
_RULE_ORDER = {rule_id: i for i, rule_id in enumerate(REGISTRY)}


def judge_layers(*, semantic: bool, llm: bool) -> list[str]:
    """The layers of the judge that ran (DESIGN §9), as every report names them."""
    return [
        "deterministic",
        *(["semantic"] if semantic else []),
        *(["llm"] if llm else []),
    ]


def skipped_checks(available: frozenset[Need]) -> list[str]:
    """Ids of the checks that cannot run without what is missing from `available`."""
    return [check.check_id for check in all_checks() if not check.needs <= available]


def _sorted(findings: list[Finding]) -> list[Finding]:
    # Stable sort: within a severity and turn, registry order is kept.
    return sorted(
        findings,
        key=lambda f: (SEVERITY_ORDER[f.severity], -1 if f.turn_index is None else f.turn_index),
    )


# CPU seconds of this thread: what a hostile reply can make a check spend, whatever else the
# machine does. Tests pass their own clock.
Clock = Callable[[], float]


@dataclass(frozen=True)
class CheckedCase:
    """What the checks of one case said, which of them (and "semantic") its judging deadline
    left unrun, in registry order, and the turns judged on a prefix (`bound_case`)."""

    findings: list[Finding]
    skipped: list[str] = field(default_factory=list)
    truncated_turns: list[int] = field(default_factory=list)


def _prefix(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[:max_chars]


def bound_case(case: CaseTranscript, max_chars: int | None) -> tuple[CaseTranscript, list[int]]:
    """The case as the judge reads it: each turn's customer message, reply and extracted values
    cut to their first `max_chars` characters (None: whole), and the indexes of the turns cut.
    The one place the judge bounds untrusted text (issue 33): every check, the evidence check,
    merging, scoring and the semantic layer read this case, so a quote is a verbatim prefix of
    what was said. Cutting again changes nothing."""
    if max_chars is None:
        return case, []
    turns: list[Turn] = []
    cut: list[int] = []
    for turn in case.turns:
        extracted = {k: _prefix(v, max_chars) for k, v in turn.extracted.items()}
        customer, reply = _prefix(turn.customer, max_chars), _prefix(turn.reply, max_chars)
        if (customer, reply, extracted) == (turn.customer, turn.reply, turn.extracted):
            turns.append(turn)
            continue
        cut.append(turn.index)
        turns.append(
            turn.model_copy(update={"customer": customer, "reply": reply, "extracted": extracted})
        )
    if not cut:
        return case, []
    return case.model_copy(update={"turns": turns}), cut


def check_case(
    case: CaseTranscript,
    manifest: Manifest,
    config: JudgeConfig,
    *,
    available: frozenset[Need] = EVERYTHING,
    clock: Clock = time.thread_time,
) -> CheckedCase:
    """What every applicable check says, before merging; exact duplicates dropped; then the
    semantic layer's confirmations and own findings (`judge.semantic.layer`). With a deadline
    (`config.deadline_s`), the clock is read before each check and before the semantic layer:
    once the case has spent its seconds, the steps left are skipped and named. The checks read
    the case cut to `config.max_chars` per text (`bound_case`)."""
    started = clock()
    case, truncated = bound_case(case, config.max_chars)

    def out_of_time() -> bool:
        return config.deadline_s is not None and clock() - started >= config.deadline_s

    findings: list[Finding] = []
    skipped: list[str] = []
    seen: set[tuple[str, int | None, str, str]] = set()
    for check in all_checks():
        if not check.needs <= available:
            continue
        if skipped or out_of_time():
            skipped.append(check.check_id)
            continue
        for finding in check.run(case, manifest, config):
            key = (finding.rule_id, finding.turn_index, finding.fingerprint, finding.severity)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    if config.semantic and (skipped or out_of_time()):
        return CheckedCase(findings, [*skipped, "semantic"], truncated)
    return CheckedCase(apply_semantic(case, findings, config), skipped, truncated)


def raw_findings(
    case: CaseTranscript,
    manifest: Manifest,
    config: JudgeConfig,
    *,
    available: frozenset[Need] = EVERYTHING,
) -> list[Finding]:
    """The findings of `check_case` (what a deadline skipped is not said)."""
    return check_case(case, manifest, config, available=available).findings


def run_checks(
    case: CaseTranscript,
    manifest: Manifest,
    config: JudgeConfig,
    *,
    available: frozenset[Need] = EVERYTHING,
) -> list[Finding]:
    """Findings of the applicable checks whose evidence is verbatim (`judge.evidence`), one
    per defect (`judge.merge`), most severe first, then by turn. Checks needing something not
    in `available` are skipped."""
    case, _ = bound_case(case, config.max_chars)
    findings = raw_findings(case, manifest, config, available=available)
    verified, _ = verify_findings(case, manifest, findings)
    return _sorted(merge_findings(verified, case, _RULE_ORDER))


def judge_case(
    case: CaseTranscript,
    manifest: Manifest,
    *,
    config: JudgeConfig,
    extra: list[Finding] | None = None,
    available: frozenset[Need] = EVERYTHING,
    raw: list[Finding] | None = None,
    skipped: list[str] | None = None,
    clock: Clock = time.thread_time,
) -> CaseJudgement:
    """Findings, scores and pass/fail of one case: the deterministic checks, plus `extra`
    (verified LLM findings) whose fingerprint no deterministic finding already has, merged so
    that one defect is one finding. Every finding first passes the evidence check
    (`judge.evidence`): one whose quote or subject is not in what it cites is dropped and
    counted in `unsupported_by_rule`. `raw`: what `raw_findings` said of this very case earlier
    (the checks are then not run again), with `skipped`, the steps its deadline skipped then.
    `clock`: read by the deadline (`check_case`). Everything reads the case cut to
    `config.max_chars` per text (`bound_case`); the judgement names the turns cut."""
    case, truncated = bound_case(case, config.max_chars)
    if raw is None:
        checked = check_case(case, manifest, config, available=available, clock=clock)
        raw, skipped = checked.findings, checked.skipped
    findings = list(raw)
    known = {f.fingerprint for f in findings}
    for finding in extra or []:
        if finding.fingerprint not in known:
            known.add(finding.fingerprint)
            findings.append(finding)
    findings, unsupported = verify_findings(case, manifest, findings)
    findings = _sorted(merge_findings(findings, case, _RULE_ORDER))
    scores = case_scores(case, findings, manifest)
    return CaseJudgement(
        case_key=case.case_key,
        findings=findings,
        scores=scores,
        passed=case_passed(scores, findings, config),
        unsupported_by_rule=unsupported,
        skipped_checks=list(skipped or []),
        truncated_turns=truncated,
    )
