"""Defects the judge missed, added by a reviewer on a turn of a locked run (issue 36, point 2).

A miss is stored apart from the run's own rows (`MissedFinding`, outside the locked run's
triggers): the run stays locked and its verdict never changes. The report says what the verdict
would have been with the misses (`verdict_with_misses`, the gate's own logic). Like triage, a
miss carries to the organization's later runs (`missed_carry`, called when a run is reported):
a case of the same scenario that still says the quote in a bot turn gets a copy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from judge import gate
from judge.rules import catalog_rows, rule_for
from judge.schemas import Evidence, Finding
from qalab.domain import SEVERITIES
from runs.findings import finding_model
from runs.models import OTHER_RULE, CaseStatus, MissedFinding, Run, RunCase, RunTurn
from runs.triage import gate_waivers, run_triage_carried

QUOTE_MAX = 500
NOTE_MAX = 2000
OTHER_TEXT_MAX = 300
# Catalog rules a reviewer cannot pick: a case that could not be run is no judge's miss, and the
# LLM judge's rules have no fixed id.
_NOT_PICKABLE = frozenset({"case_error", "llm:<rule>"})
_SPACE = re.compile(r"\s+")


class MissedFindingError(ValueError):
    """Why a miss was refused, and which field of the form it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class MissedResult:
    missed: MissedFinding
    created: bool  # False: the same miss (rule, quote) was already on this case of the run


def missed_rules() -> list[tuple[str, str, str]]:
    """(rule id, label, usual severity) a reviewer may file a miss under: the catalog's rules,
    then `other` (its severity is the reviewer's call: major offered)."""
    rows = [r for r in catalog_rows() if r.id not in _NOT_PICKABLE]
    return [(r.id, f"{r.id} ({r.severity})", r.severity) for r in rows] + [
        (OTHER_RULE, "other (say what in words)", "major")
    ]


def missed_rule_choices() -> list[tuple[str, str]]:
    """The form's choices of `missed_rules`."""
    return [(rule, label) for rule, label, _ in missed_rules()]


def quote_span(text: str, quote: str) -> str | None:
    """The part of `text` that says `quote` verbatim, or None. Only runs of white space may
    differ (a quote selected on a page reads a line break as a space); the text returned is
    the turn's own, exactly."""
    quote = quote.strip()
    if not quote:
        return None
    if quote in text:
        return quote
    words = [re.escape(w) for w in _SPACE.split(quote) if w]
    match = re.search(r"\s+".join(words), text)
    return match.group(0) if match else None


def missed_fingerprint(rule_id: str, other_text: str, quote: str) -> str:
    """The same miss across runs: its rule (with the words of an `other`) and its quote."""
    rule = f"missed:{rule_id}" + (f":{other_text.strip()}" if rule_id == OTHER_RULE else "")
    return gate.fingerprint(rule, quote)


def _validated_quote(turn: RunTurn, quote: str) -> str:
    quote = quote.strip()
    if not quote:
        raise MissedFindingError("quote", "Select or paste the words of the turn that show it.")
    if len(quote) > QUOTE_MAX:
        raise MissedFindingError(
            "quote", f"The quote is {len(quote)} characters; keep it to {QUOTE_MAX} at most."
        )
    for text in (turn.responder_reply, turn.customer_message):
        if (span := quote_span(text, quote)) is not None:
            return span
    raise MissedFindingError(
        "quote",
        f"Turn {turn.index} does not say this: the quote must be copied word for word from "
        "that turn's bot reply or customer message.",
    )


def add_missed_finding(
    *,
    run: Run,
    case: RunCase,
    turn_index: int,
    rule_id: str,
    other_text: str,
    severity: str,
    quote: str,
    note: str,
    user: Any,
) -> MissedResult:
    """Record a defect the judge missed on turn `turn_index` of `case` (a case of the locked
    `run`). The quote is checked against that turn's reply and customer message and stored as
    the turn says it. Adding the same miss (rule and quote) on the same case again returns the
    existing row (`created` False). MissedFindingError (with the form field) otherwise."""
    if run.locked_at is None:
        raise MissedFindingError("__all__", f"Run #{run.pk} is not final yet: wait for it.")
    if case.run_id != run.pk:
        raise MissedFindingError("__all__", f"That case is not a case of run #{run.pk}.")
    turn = RunTurn.objects.filter(case=case, index=turn_index).first()
    if turn is None:
        raise MissedFindingError("turn_index", f"Case {case.key} has no turn {turn_index}.")
    if rule_id != OTHER_RULE and (rule_for(rule_id) is None or rule_id in _NOT_PICKABLE):
        raise MissedFindingError("rule_id", f"{rule_id!r} is not a rule of the catalog.")
    other_text = other_text.strip() if rule_id == OTHER_RULE else ""
    if rule_id == OTHER_RULE and not other_text:
        raise MissedFindingError("other_text", "Say in a few words what the judge missed.")
    if len(other_text) > OTHER_TEXT_MAX:
        raise MissedFindingError("other_text", f"Keep it to {OTHER_TEXT_MAX} characters.")
    if severity not in SEVERITIES:
        raise MissedFindingError("severity", f"Severity must be one of {', '.join(SEVERITIES)}.")
    note = note.strip()
    if len(note) > NOTE_MAX:
        raise MissedFindingError("note", f"Keep the note to {NOTE_MAX} characters.")
    span = _validated_quote(turn, quote)
    fingerprint = missed_fingerprint(rule_id, other_text, span)
    existing = MissedFinding.objects.filter(run=run, case=case, fingerprint=fingerprint).first()
    if existing is not None:
        return MissedResult(existing, created=False)
    try:
        with transaction.atomic():
            row = MissedFinding.objects.create(
                run=run,
                case=case,
                turn_index=turn_index,
                rule_id=rule_id,
                other_text=other_text,
                severity=severity,
                quote=span,
                note=note,
                reviewer=user if getattr(user, "pk", None) else None,
                fingerprint=fingerprint,
            )
    except IntegrityError:  # the same miss, added at the same moment by another request
        existing = MissedFinding.objects.get(run=run, case=case, fingerprint=fingerprint)
        return MissedResult(existing, created=False)
    return MissedResult(row, created=True)


def run_missed_findings(*, run: Run, case: RunCase | None = None) -> list[MissedFinding]:
    """The misses of a run (or of one of its cases), most severe first, then as added."""
    rows = MissedFinding.objects.filter(run=run)
    if case is not None:
        rows = rows.filter(case=case)
    rows = rows.select_related("reviewer", "case", "carried_from").order_by("id")
    return sorted(rows, key=lambda m: SEVERITIES.index(m.severity))


def _sources(run: Run) -> list[MissedFinding]:
    """The misses added by hand on the organization's runs before `run`, newest first: real
    bots' for a real bot's run, the lab's own for one of the lab's own (as triage carries)."""
    rows = MissedFinding.objects.filter(
        run__organization_id=run.organization_id,
        run_id__lt=run.pk,
        carried_from_run__isnull=True,
    )
    rows = rows.filter(run_id__in=Run.objects.of_side(lab=bool(run.probe)).values("id"))
    return list(rows.select_related("case").order_by("-created_at", "-id"))


def missed_carry(*, run: Run) -> list[MissedFinding]:
    """Copy onto `run` each miss added by hand in an earlier run of its organization whose quote
    a case of the same scenario still says in a bot reply (the first such turn), marked as
    carried from the run where it was added. The newest miss of a fingerprint wins. Idempotent:
    a case that has the miss already is left alone. Called when the run is reported."""
    sources = _sources(run)
    if not sources:
        return []
    scenarios = {m.case.scenario_key for m in sources}
    turns: dict[str, list[tuple[RunCase, RunTurn]]] = {}
    for case in RunCase.objects.filter(run=run, scenario_key__in=scenarios).order_by("trial"):
        for turn in case.turns.order_by("index"):
            turns.setdefault(case.scenario_key, []).append((case, turn))
    have = set(MissedFinding.objects.filter(run=run).values_list("case_id", "fingerprint"))
    copies: list[MissedFinding] = []
    for source in sources:
        for case, turn in turns.get(source.case.scenario_key, []):
            if (case.pk, source.fingerprint) in have:
                continue
            span = quote_span(turn.responder_reply, source.quote)
            if span is None:
                continue
            have.add((case.pk, source.fingerprint))
            copies.append(
                MissedFinding(
                    run=run,
                    case=case,
                    turn_index=turn.index,
                    rule_id=source.rule_id,
                    other_text=source.other_text,
                    severity=source.severity,
                    quote=span,
                    note=source.note,
                    reviewer_id=source.reviewer_id,
                    fingerprint=source.fingerprint,
                    carried_from_run=source.run_id,
                    carried_from=source,
                )
            )
    return MissedFinding.objects.bulk_create(copies, ignore_conflicts=True)


def _as_finding(miss: MissedFinding) -> Finding:
    """A miss as the gate reads a finding."""
    rule = rule_for(miss.rule_id)
    return Finding(
        rule_id=miss.rule_id,
        severity=miss.severity,
        case_key=miss.case.key,
        turn_index=miss.turn_index,
        subject=miss.quote,
        evidence=[Evidence(source="reply", quote=miss.quote, turn=miss.turn_index)],
        rationale=miss.note or miss.other_text or "missed by the judge",
        fix_target=rule.fix_target if rule else "prompt",
        fix_text="",
        effort="M",
        confidence=1.0,
        detector="reviewer",
        fingerprint=miss.fingerprint,
    )


def verdict_with_misses(*, run: Run, misses: Sequence[MissedFinding]) -> str | None:
    """The verdict the gate (`judge.gate.verdict`) gives the run's findings plus `misses`, with
    the run's own inputs (budget stop, errored cases, criticals a carried decision waived), or
    None when there is no miss or the run has no verdict. The run's verdict never changes."""
    if not misses or not run.verdict:
        return None
    findings = list(run.findings.select_related("case").order_by("position"))
    waived = gate_waivers(findings=findings, carried=run_triage_carried(run=run))
    own = [finding_model(f) for f in findings]
    return gate.verdict(
        [*own, *(_as_finding(m) for m in misses)],
        budget_stopped=run.budget_exhausted,
        errored=run.cases.filter(status=CaseStatus.ERROR).exists(),
        waived={i for i, f in enumerate(findings) if f.id in waived},
    )
