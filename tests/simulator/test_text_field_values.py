"""Custom free-text intake fields of a new org (tests/data/orgs/bike-repair-uk: "Bike make and
type", "Frame number", "What is wrong with it"): over many seeds the offline customer answers
each with a value of its kind, never with the field's label, and the persona fact the judge's
extraction check compares against is exactly what the customer said."""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from pathlib import Path

import pytest

from generator.scenarios import build_blueprints, plan_scenarios
from generator.schemas import Blueprint
from judge.fields import find_statement, values_match
from judge.schemas import Turn
from qalab.domain import IntakeFieldSpec, OrgContext
from qalab.llm import NullLedger, get_engine
from qalab.org_folder import load_org_folder
from runs.simulator.adapters import get_responder
from runs.simulator.contract import IntakeFieldRef, KbEntry
from tests.simulator.helpers import play_offline

ORG_DIR = Path(__file__).resolve().parents[1] / "data" / "orgs" / "bike-repair-uk"
TODAY = date(2026, 3, 2)  # a Monday: the conversations' reference day
SEEDS = range(1, 21)


@cache
def _org() -> OrgContext:
    return load_org_folder(ORG_DIR)


def _text_fields(org: OrgContext) -> list[IntakeFieldSpec]:
    return [f for f in org.intake_fields if f.kind == "text"]


def _play(org: OrgContext, seed: int) -> list[tuple[Blueprint, list[Turn]]]:
    """Every blueprint of a 12-scenario plan, played against the reference responder."""
    engine = get_engine("offline", ledger=NullLedger())
    plan = plan_scenarios(org, scenarios=12, seed=seed)
    blueprints = build_blueprints(org, plan, max_turns=5, seed=seed, start=TODAY)
    intake = [
        IntakeFieldRef(key=f.key, label=f.label, required=f.required) for f in org.intake_fields
    ]
    kb = [KbEntry(id=d.slug, title=d.title, text=d.text) for d in org.kb]
    responder = get_responder("reference")
    played = []
    for blueprint in blueprints:
        history = play_offline(
            blueprint,
            organization=org.slug,
            locale=org.locale,
            kb=kb,
            intake=intake,
            engine=engine,
            responder=responder,
        )
        played.append((blueprint, history))
    return played


@pytest.fixture(scope="module")
def conversations() -> list[tuple[Blueprint, list[Turn]]]:
    org = _org()
    return [c for seed in SEEDS for c in _play(org, seed)]


def _names(field: IntakeFieldSpec) -> list[str]:
    """How a customer may name the field before its value: its label, or its key in words."""
    return [field.label, field.key.replace("_", " ")]


def _labelled(name: str, text: str) -> list[str]:
    """Values given as `Name: value` / `name - value` in `text`, up to the full stop."""
    pattern = rf"\b{re.escape(name)}\s*(?::|\s-)\s*([^.\n]+)"
    return [m.group(1).strip() for m in re.finditer(pattern, text, re.IGNORECASE)]


def test_the_org_has_three_custom_text_fields_without_examples() -> None:
    plain = [f for f in _text_fields(_org()) if not f.examples]
    assert [f.label for f in plain] == [
        "Bike make and type",
        "Frame number",
        "What is wrong with it",
    ]


def test_no_text_value_is_the_field_label(
    conversations: list[tuple[Blueprint, list[Turn]]],
) -> None:
    for blueprint, _ in conversations:
        for field in _text_fields(_org()):
            value = blueprint.persona.facts[field.key].casefold()
            assert value.strip()
            assert field.label.casefold() not in value, (blueprint.key, field.label, value)
            assert value not in [n.casefold() for n in _names(field)]


def test_no_customer_message_gives_a_label_as_its_value(
    conversations: list[tuple[Blueprint, list[Turn]]],
) -> None:
    said = 0
    for blueprint, history in conversations:
        for turn in history:
            for field in _text_fields(_org()):
                for name in _names(field):
                    for value in _labelled(name, turn.customer):
                        said += 1
                        for label in _names(field):
                            assert not value.casefold().startswith(label.casefold()), (
                                blueprint.key,
                                turn.customer,
                            )
    assert said >= 100


def test_each_text_fact_is_what_the_customer_said(
    conversations: list[tuple[Blueprint, list[Turn]]],
) -> None:
    stated = answered = 0
    for blueprint, history in conversations:
        scripted = {*blueprint.planned_messages, *(s.reply for s in blueprint.reply_flow)}
        for field in _text_fields(_org()):
            truth = blueprint.persona.facts[field.key]
            for turn in history:
                for name in _names(field):
                    for value in _labelled(name, turn.customer):
                        # What the customer gave for the field is the persona's fact...
                        assert values_match("text", value, truth), (value, truth, turn.customer)
                quote = find_statement("text", truth, turn.customer, blueprint.reference_date)
                if quote:
                    # ...and the judge finds the fact, word for word, where it was said.
                    assert values_match("text", quote, truth)
                    stated += 1
                    answered += turn.customer not in scripted
        if blueprint.scenario_type == "booking_full_intake":
            said = " ".join(t.customer for t in history)
            assert all(blueprint.persona.facts[f.key] in said for f in _text_fields(_org()))
    assert stated >= 100
    assert answered  # some were answers to the responder's questions (runs/simulator/customer.py)
