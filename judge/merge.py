"""One defect = one finding: merge what several rules or turns say about the same defect.

Two steps, per case:

1. **Same reply span.** Findings of different rules whose reply evidence overlaps in the same
   turn (a quoted price inside a quoted sentence, two rules quoting the same reply) describe one
   defect: the most severe finding wins (then the more confident, then registry order) and the
   other rules are listed on it as `corroborating`. A finding's span is its reply evidence in
   its own turn (a repeated question points at the repeat, not at the first ask).
2. **Same defect, later turns.** Findings of one rule with the same fingerprint in several turns
   of a case (the same invented price quoted twice) become one finding about the first turn,
   with every occurrence's evidence.
"""

from __future__ import annotations

from collections.abc import Sequence

from judge.schemas import CaseTranscript, Evidence, Finding
from qalab.domain import SEVERITY_ORDER

Span = tuple[int, int, int]  # turn, start, end within that turn's reply


def _spans(finding: Finding, replies: dict[int, str]) -> list[Span]:
    """The reply span a finding points at: its reply evidence in its own turn (all its reply
    evidence when none is in that turn), as (turn, start, end); a quote that cannot be located
    exactly covers its whole reply."""
    quotes = [e for e in finding.evidence if e.source == "reply" and e.turn is not None]
    own = [e for e in quotes if e.turn == finding.turn_index] or quotes
    spans: list[Span] = []
    for evidence in own:
        assert evidence.turn is not None
        reply = replies.get(evidence.turn, "")
        start = reply.find(evidence.quote)
        if start < 0:
            spans.append((evidence.turn, 0, len(reply)))
        else:
            spans.append((evidence.turn, start, start + len(evidence.quote)))
    return spans


def _overlap(a: list[Span], b: list[Span]) -> bool:
    return any(ta == tb and sa < eb and sb < ea for ta, sa, ea in a for tb, sb, eb in b)


def _rank(finding: Finding, order: dict[str, int]) -> tuple[int, float, int]:
    return (
        SEVERITY_ORDER[finding.severity],
        -finding.confidence,
        order.get(finding.rule_id, len(order)),
    )


def _with_corroboration(winner: Finding, others: Sequence[Finding]) -> Finding:
    extra = [f.rule_id for f in others if f.rule_id != winner.rule_id]
    extra += [rule for f in others for rule in f.corroborating]
    merged = list(dict.fromkeys([*winner.corroborating, *extra]))
    merged = [rule for rule in merged if rule != winner.rule_id]
    if merged == winner.corroborating:
        return winner
    return winner.model_copy(update={"corroborating": merged})


def merge_same_span(
    findings: list[Finding], case: CaseTranscript, order: dict[str, int]
) -> list[Finding]:
    """Step 1: most severe first, a finding whose span overlaps a kept finding of another rule
    is absorbed by it (its rule becomes corroborating); otherwise it is kept. Two findings of
    one rule are never merged here: two invented prices in one sentence stay two defects."""
    replies = {t.index: t.reply for t in case.turns}
    kept: list[tuple[Finding, list[Span], list[Finding]]] = []
    for finding in sorted(findings, key=lambda f: _rank(f, order)):
        spans = _spans(finding, replies)
        for winner, winner_spans, absorbed in kept:
            if winner.rule_id != finding.rule_id and _overlap(winner_spans, spans):
                absorbed.append(finding)
                break
        else:
            kept.append((finding, spans, []))
    return [_with_corroboration(winner, absorbed) for winner, _, absorbed in kept]


def merge_repeats(findings: list[Finding]) -> list[Finding]:
    """Step 2: one finding per (rule, fingerprint) in a case, with all occurrences' evidence."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        groups.setdefault((finding.rule_id, finding.fingerprint), []).append(finding)
    merged: list[Finding] = []
    for members in groups.values():
        if len(members) == 1:
            merged.append(members[0])
            continue
        members.sort(key=lambda f: -1 if f.turn_index is None else f.turn_index)
        first = members[0]
        evidence: list[Evidence] = list(dict.fromkeys(e for f in members for e in f.evidence))
        worst = min(members, key=lambda f: SEVERITY_ORDER[f.severity])
        combined = first.model_copy(
            update={
                "severity": worst.severity,
                "confidence": max(f.confidence for f in members),
                "evidence": evidence,
                "confirmed": all(f.confirmed for f in members),
                "rationale": (
                    first.rationale
                    if len(members) == 1
                    else f"{first.rationale} (Seen in {len(members)} turns.)"
                ),
            }
        )
        merged.append(_with_corroboration(combined, members[1:]))
    return merged


def merge_findings(
    findings: list[Finding], case: CaseTranscript, order: dict[str, int]
) -> list[Finding]:
    """Both steps; `order` ranks rule ids for ties (registry order)."""
    return merge_repeats(merge_same_span(findings, case, order))
