"""Judge a transcript from a file, with no run behind it (`manage.py qalab_judge`).

A dialogue is a list of customer and bot messages, optionally with the knowledge base the bot
had. It becomes a `CaseTranscript`: each bot message is one turn, whose customer text is what
the customer wrote since the previous bot message. Checks that need what a file cannot give
(the org's ground truth without `--org`, a scenario's persona and expected status unless the
line carries its `blueprint`, a KB when none is given) are skipped and listed. Findings point
at the bot message by its index in the dialogue's `turns`.

Optional keys (a file without them reads as before): a bot message may carry what the bot
returned beside its reply, `extracted` (intake field -> value) and `status`
(AWAITING_RESPONSE / COMPLETE); a line may carry `blueprint`, the scenario it was played from
(`generator.schemas.Blueprint`: persona facts, expected status, reference date). With a
blueprint the case is that scenario, its final status the last bot message's `status`, and the
scenario checks (`final_status`; `extraction_accuracy` with the org's manifest too) run.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from generator.schemas import Blueprint, Fixture, FixtureDocument, Manifest, Persona
from judge.checks import REGISTRY
from judge.checks.base import Need
from judge.engine import judge_case, skipped_checks
from judge.facts import extract_facts
from judge.schemas import CaseTranscript, Finding, JudgeConfig, Turn

DEFAULT_CONFIG = JudgeConfig(strictness=0.5, min_score_to_pass=0.7)


class DialogueMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["customer", "bot"]
    text: str
    # Optional, a bot message's only: what the bot returned beside its reply.
    extracted: dict[str, str] | None = None
    status: str | None = None

    @model_validator(mode="after")
    def _bot_only(self) -> DialogueMessage:
        if self.role == "customer" and (self.extracted is not None or self.status is not None):
            raise ValueError("only a bot message carries extracted or status")
        return self


class DialogueDocument(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    title: str = ""
    text: str


class Dialogue(BaseModel):
    """One line of a `--dialogues` file; other keys (labels, notes) are ignored."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    kb: list[DialogueDocument] = Field(default_factory=list)
    turns: list[DialogueMessage] = Field(min_length=1)
    # Optional: the scenario the dialogue was played from; the scenario checks run with it.
    blueprint: Blueprint | None = None


class DialogueFinding(BaseModel):
    rule: str
    severity: str
    turn: int | None = Field(description="index into the dialogue's turns of the bot message")
    evidence: list[dict[str, str | int | None]]
    subject: str
    corroborating: list[str]
    rationale: str
    confidence: float = Field(description="the finding's confidence (a head's score, if any)")
    detector: str


class DialogueJudgement(BaseModel):
    id: str
    findings: list[DialogueFinding]
    skipped_checks: list[str] = Field(
        default_factory=list,
        description="the checks that did not run on this dialogue: what they need is missing, "
        "or the judging deadline came first (then also 'semantic' when the layer was skipped)",
    )


def _currency(texts: list[str]) -> str:
    """The currency the KB and the bot write in most ("£52" -> GBP), EUR when none shows."""
    counts = Counter(
        f.value.split()[-1]
        for text in texts
        for f in extract_facts(text)
        if f.kind == "money" and " " in f.value
    )
    return counts.most_common(1)[0][0] if counts else "EUR"


def empty_manifest(dialogue: Dialogue) -> Manifest:
    """A manifest that knows nothing but the currency: stands in when no org is given."""
    texts = [d.text for d in dialogue.kb] + [m.text for m in dialogue.turns]
    return Manifest(
        org_slug="",
        org_name="",
        currency=_currency(texts),
        services=[],
        intake_fields=[],
        policies=[],
        hours=[],
        contacts=[],
        disallowed_claims=[],
    )


def to_case(
    dialogue: Dialogue, kb: list[FixtureDocument] | None = None
) -> tuple[CaseTranscript, list[int]]:
    """The dialogue as a case, and for each case turn the index of its bot message."""
    turns: list[Turn] = []
    positions: list[int] = []
    pending: list[str] = []
    for position, message in enumerate(dialogue.turns):
        if message.role == "customer":
            pending.append(message.text)
            continue
        turns.append(
            Turn(
                index=len(turns),
                customer="\n".join(pending),
                reply=message.text,
                extracted=message.extracted or {},
                status=message.status or None,
            )
        )
        positions.append(position)
        pending = []
    documents = (
        kb
        if kb is not None
        else [FixtureDocument(id=d.id, title=d.title or d.id, text=d.text) for d in dialogue.kb]
    )
    fixture = Fixture(key="kb", noise_level="clean", documents=documents)
    if dialogue.blueprint is not None:
        # The scenario it was played from; its final status is the last bot message's.
        return CaseTranscript(
            case_key=dialogue.id,
            blueprint=dialogue.blueprint,
            fixture=fixture,
            turns=turns,
            actual_status=turns[-1].status if turns else None,
        ), positions
    first = next((m.text for m in dialogue.turns if m.role == "customer"), "") or "(none)"
    blueprint = Blueprint(
        key=dialogue.id,
        scenario_type="transcript",
        title=dialogue.id,
        goal="",
        fixture_key="kb",
        persona=Persona(name="", locale="", style="clean", facts={}),
        planned_messages=[first],
        expected_status="AWAITING_RESPONSE",
        max_turns=max(1, len(turns)),
    )
    return CaseTranscript(
        case_key=dialogue.id, blueprint=blueprint, fixture=fixture, turns=turns
    ), (positions)


def available_context(dialogue: Dialogue, *, org: bool, org_kb: bool) -> frozenset[Need]:
    """What the checks can rely on for this dialogue: a scenario only when it carries its
    blueprint."""
    have: set[Need] = set()
    if dialogue.blueprint is not None:
        have.add("scenario")
    if org:
        have.add("org")
    if dialogue.kb or org_kb:
        have.add("kb")
    return frozenset(have)


def _dialogue_turn(
    turn: int | None, positions: list[int], dialogue: Dialogue, source: str
) -> int | None:
    """A case turn index as an index into the dialogue's messages (a customer quote points at
    the last customer message before that bot message)."""
    if turn is None or turn >= len(positions):
        return None
    bot = positions[turn]
    if source != "customer":
        return bot
    earlier = [i for i in range(bot) if dialogue.turns[i].role == "customer"]
    return earlier[-1] if earlier else None


def _as_output(finding: Finding, positions: list[int], dialogue: Dialogue) -> DialogueFinding:
    return DialogueFinding(
        rule=finding.rule_id,
        severity=finding.severity,
        turn=_dialogue_turn(finding.turn_index, positions, dialogue, "reply"),
        evidence=[
            {
                "source": e.source,
                "quote": e.quote,
                "turn": _dialogue_turn(e.turn, positions, dialogue, e.source),
            }
            for e in finding.evidence
        ],
        subject=finding.subject,
        corroborating=finding.corroborating,
        rationale=finding.rationale,
        confidence=finding.confidence,
        detector=finding.detector,
    )


def judge_dialogue(
    dialogue: Dialogue,
    manifest: Manifest | None = None,
    *,
    org_kb: list[FixtureDocument] | None = None,
    config: JudgeConfig = DEFAULT_CONFIG,
) -> DialogueJudgement:
    """Findings on one dialogue. With `manifest` (an org's), the org checks run too; the org's
    KB documents stand in for a dialogue that brings none."""
    kb = None if dialogue.kb or not org_kb else org_kb
    case, positions = to_case(dialogue, kb)
    available = available_context(dialogue, org=manifest is not None, org_kb=bool(kb))
    judgement = judge_case(
        case, manifest or empty_manifest(dialogue), config=config, available=available
    )
    unrun = {*skipped_checks(available), *judgement.skipped_checks}
    return DialogueJudgement(
        id=dialogue.id,
        findings=[_as_output(f, positions, dialogue) for f in judgement.findings],
        skipped_checks=[c for c in REGISTRY if c in unrun] + sorted(unrun - set(REGISTRY)),
    )
