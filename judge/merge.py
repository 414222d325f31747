"""One defect = one finding: merge what several rules or turns say about the same defect.

Three steps, per case:

1. **One rule, one span.** Findings of one rule whose reply evidence overlaps in the same turn
   (a sentence with two wrong times, each reported on its own) are one defect: one finding,
   the most severe of them, with every value's evidence, rationale and fix; its subject is the
   verbatim stretch from the first value to the last, its fingerprint keys all of them.
2. **Same reply span.** Findings of different rules whose reply evidence overlaps in the same
   turn (a quoted price inside a quoted sentence, two rules quoting the same reply) describe one
   defect: the most severe finding wins (then the more confident, then registry order) and the
   other rules are listed on it as `corroborating`. A finding's span is its reply evidence in
   its own turn (a repeated question points at the repeat, not at the first ask).
3. **Same defect, later turns.** Findings of one rule with the same fingerprint in several turns
   of a case (the same invented price quoted twice) become one finding about the first turn,
   with every occurrence's evidence; its severity is the most severe occurrence's.
"""

from __future__ import annotations

from collections.abc import Sequence

from judge.gate import fingerprint
from judge.schemas import CaseTranscript, Evidence, Finding
from qalab.domain import SEVERITY_ORDER

Span = tuple[int, int, int]  # turn, start, end within that turn's reply


def _spans(finding: Finding, replies: dict[int, str], *, exact: bool = False) -> list[Span]:
    """The reply span a finding points at: its reply evidence in its own turn (all its reply
    evidence when none is in that turn), as (turn, start, end); a quote that cannot be located
    exactly covers its whole reply (with `exact`, it is left out)."""
    quotes = [e for e in finding.evidence if e.source == "reply" and e.turn is not None]
    own = [e for e in quotes if e.turn == finding.turn_index] or quotes
    spans: list[Span] = []
    for evidence in own:
        assert evidence.turn is not None
        reply = replies.get(evidence.turn, "")
        start = reply.find(evidence.quote)
        if start >= 0:
            spans.append((evidence.turn, start, start + len(evidence.quote)))
        elif not exact:
            spans.append((evidence.turn, 0, len(reply)))
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


def _joined(texts: list[str]) -> str:
    return " ".join(dict.fromkeys(texts))


def _subject(members: list[Finding], spans: list[Span], replies: dict[int, str]) -> str:
    """The verbatim stretch of the reply from the first member's subject to the last one's,
    when every subject is found there; else the first member's subject."""
    turn = spans[0][0]
    reply = replies.get(turn, "")
    starts = min(start for t, start, _ in spans if t == turn)
    ends = max(end for t, _, end in spans if t == turn)
    found = [
        (at, at + len(f.subject)) for f in members if (at := reply.find(f.subject, starts)) >= 0
    ]
    if len(found) < len(members) or max(b for _, b in found) > ends:
        return members[0].subject
    return reply[min(a for a, _ in found) : max(b for _, b in found)]


def _one_defect(
    members: list[Finding], spans: list[Span], replies: dict[int, str], order: dict[str, int]
) -> Finding:
    """Findings of one rule on one reply span as one finding (step 1)."""
    base = min(members, key=lambda f: _rank(f, order))
    # In the reply's order: "05:45 to 23:15", the rationale of 05:45 first.
    located = sorted(members, key=lambda f: _start(f, replies))
    key = " + ".join(dict.fromkeys(f.key or f.subject for f in located))
    merged = base.model_copy(
        update={
            "subject": _subject(located, spans, replies),
            "key": key,
            "fingerprint": fingerprint(base.rule_id, key),
            "evidence": list(dict.fromkeys(e for f in located for e in f.evidence)),
            "rationale": _joined([f.rationale for f in located]),
            "fix_text": _joined([f.fix_text for f in located]),
            "confidence": max(f.confidence for f in members),
            "confirmed": all(f.confirmed for f in members),
        }
    )
    return _with_corroboration(merged, members)


def _start(finding: Finding, replies: dict[int, str]) -> int:
    reply = replies.get(finding.turn_index if finding.turn_index is not None else -1, "")
    at = reply.find(finding.subject)
    return at if at >= 0 else len(reply)


def merge_same_rule_span(
    findings: list[Finding], case: CaseTranscript, order: dict[str, int]
) -> list[Finding]:
    """Step 1: findings of one rule whose exactly located reply spans overlap in a turn (a
    sentence with two wrong values) become one finding; the others are kept as they are."""
    replies = {t.index: t.reply for t in case.turns}
    groups: list[tuple[list[Finding], list[Span]]] = []
    for finding in findings:
        spans = _spans(finding, replies, exact=True)
        group = next(
            (
                g
                for g in groups
                if spans and g[0][0].rule_id == finding.rule_id and _overlap(g[1], spans)
            ),
            None,
        )
        if group is None:
            groups.append(([finding], spans))
        else:
            group[0].append(finding)
            group[1].extend(spans)
    return [
        members[0] if len(members) == 1 else _one_defect(members, spans, replies, order)
        for members, spans in groups
    ]


def merge_same_span(
    findings: list[Finding], case: CaseTranscript, order: dict[str, int]
) -> list[Finding]:
    """Step 2: most severe first, a finding whose span overlaps a kept finding of another rule
    is absorbed by it (its rule becomes corroborating); otherwise it is kept. Findings of one
    rule on one span were made one by step 1."""
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
    """Step 3: one finding per (rule, fingerprint) in a case, with all occurrences' evidence,
    the most severe occurrence's severity."""
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
    """The three steps; `order` ranks rule ids for ties (registry order)."""
    one_per_span = merge_same_rule_span(findings, case, order)
    return merge_repeats(merge_same_span(one_per_span, case, order))
