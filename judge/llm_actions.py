"""Top 5 actions phrased by the judge model (LLM engines), grounded in their findings.

Kept apart from `judge.actions` (pure ranking, no LLM layer): the model may reword an action's
title and explanation, never its rank, target, effort or linked findings, and never state a fact
that none of the action's findings holds.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from judge.actions import MAX_ACTIONS
from judge.facts import extract_facts
from judge.schemas import Finding, TopAction
from qalab.llm.base import Engine, Message
from qalab.llm.prompts import fence, load_prompt

PHRASE_PROMPT = load_prompt(Path(__file__).resolve().parent / "prompts", "phrase_actions")
PHRASE_MAX_TOKENS = 500
_EXAMPLES_PER_ACTION = 3
_QUOTE_CHARS = 160


class PhrasedAction(BaseModel):
    rank: int = Field(ge=1, le=MAX_ACTIONS)
    title: str = Field(min_length=3, max_length=160)
    text: str = Field(min_length=3, max_length=900)


class ActionPhrasing(BaseModel):
    actions: list[PhrasedAction] = Field(default_factory=list)


def _action_source(action: TopAction, findings: list[Finding]) -> str:
    """What the model may draw on for one action: its template wording and its findings."""
    group = [findings[i] for i in action.finding_indexes]
    lines = [
        f"rank {action.rank} · target {action.target_layer} · effort {action.effort} · "
        f"{len(group)} finding(s)",
        f"current title: {action.title}",
    ]
    for f in group[:_EXAMPLES_PER_ACTION]:
        # Each distinct quote once, cut short: a defect seen in five turns is one example.
        quotes = " | ".join(dict.fromkeys(e.quote[:_QUOTE_CHARS] for e in f.evidence))
        lines.append(
            f"- {f.severity} {f.rule_id} ({f.subject}): {f.rationale} Suggested fix: {f.fix_text}"
            f" Evidence: {quotes}"
        )
    return "\n".join(lines)


def _facts(text: str) -> set[tuple[str, str]]:
    return {(f.kind, f.value) for f in extract_facts(text)}


def check_phrasing(
    phrasing: ActionPhrasing, actions: list[TopAction], findings: list[Finding]
) -> None:
    """ValueError unless every action is phrased once and states only facts of its findings."""
    ranks = [p.rank for p in phrasing.actions]
    expected = sorted(a.rank for a in actions)
    if sorted(ranks) != expected:
        raise ValueError(f"phrase exactly the actions {expected}, once each (got {ranks})")
    by_rank = {a.rank: a for a in actions}
    for p in phrasing.actions:
        action = by_rank[p.rank]
        allowed = _facts(action.title)
        for f in (findings[i] for i in action.finding_indexes):
            allowed |= _facts(" ".join([f.subject, f.rationale, f.fix_text]))
            allowed |= {fact for e in f.evidence for fact in _facts(e.quote)}
        invented = _facts(f"{p.title}\n{p.text}") - allowed
        if invented:
            shown = ", ".join(sorted(value for _, value in invented))
            raise ValueError(f"action {p.rank} states facts not in its findings: {shown}")


def phrase_actions(
    actions: list[TopAction], findings: list[Finding], *, engine: Engine, purpose: str
) -> list[TopAction]:
    """The actions with LLM-written titles and explanations, grounded in their findings.

    One metered call for all actions; the reply must phrase each action once and state no fact
    (price, time, duration, percentage, phone, email, URL) absent from that action's findings,
    or it gets one repair turn and then falls back to the template wording (the offline
    implementation). Rank, target, effort and the linked findings never change.
    """
    if not actions:
        return actions
    blocks = "\n\n".join(_action_source(a, findings) for a in actions)
    messages: list[Message] = [
        {"role": "user", "content": PHRASE_PROMPT.render(actions=fence(blocks, "actions"))}
    ]
    phrasing = engine.run(
        role="judge",
        purpose=purpose,
        messages=messages,
        max_tokens=PHRASE_MAX_TOKENS,
        output=ActionPhrasing,
        offline=lambda: ActionPhrasing(
            actions=[PhrasedAction(rank=a.rank, title=a.title, text=a.rationale) for a in actions]
        ),
        check=lambda p: check_phrasing(p, actions, findings),
    )
    by_rank = {p.rank: p for p in phrasing.actions}
    return [
        a.model_copy(update={"title": by_rank[a.rank].title, "rationale": by_rank[a.rank].text})
        for a in actions
    ]
