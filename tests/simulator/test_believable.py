"""Conversations over the demo org are believable: the customer says only what it holds, and
answers what the responder asks when it can."""

from __future__ import annotations

import re
from datetime import date
from itertools import pairwise

import pytest

from generator.dates import proposals
from generator.pipeline import generate_artifacts
from judge.schemas import Turn
from qalab.llm import NullLedger, get_engine
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
from runs.simulator.adapters import get_responder
from runs.simulator.contract import IntakeFieldRef, KbEntry
from runs.simulator.customer import asked_facts, fact_kind, states
from tests.simulator.helpers import play_offline

VALUES = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b")
PHONE = re.compile(r"\+\d[\d ]{6,}\d")


def stated_values(text: str) -> list[str]:
    """Emails, ISO dates, times, then phone numbers in what is left."""
    found = VALUES.findall(text)
    return found + [p.strip() for p in PHONE.findall(VALUES.sub(" ", text))]


def _play(seed: int) -> list[tuple[object, list[Turn]]]:
    org = load_org_folder(DEMO_ORG_DIR)
    ledger = NullLedger()
    engine = get_engine("offline", ledger=ledger)
    artifacts = generate_artifacts(
        org,
        scenarios=12,
        max_turns=4,
        mix=(20, 50, 30),
        seed=seed,
        engine=engine,
        today=date(2026, 11, 22),
    )
    fixtures = {f.key: f for f in artifacts.fixtures}
    intake = [
        IntakeFieldRef(key=f.key, label=f.label, required=f.required)
        for f in artifacts.manifest.intake_fields
    ]
    responder = get_responder("reference")
    played = []
    for blueprint in artifacts.blueprints:
        kb = [
            KbEntry(id=d.id, title=d.title, text=d.text)
            for d in fixtures[blueprint.fixture_key].documents
        ]
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
def conversations():
    return [c for seed in (1, 2, 3) for c in _play(seed)]


def test_the_customer_states_only_facts_it_holds(conversations):
    for blueprint, history in conversations:
        allowed = " ".join(
            [
                *blueprint.persona.facts.values(),
                *blueprint.planned_messages,
                *(step.reply for step in blueprint.reply_flow),
            ]
        )
        for turn in history:
            for value in stated_values(turn.customer):
                assert value.strip() in allowed, (blueprint.key, value, turn.customer)


def test_the_customer_answers_the_intake_questions_it_can(conversations):
    asked = answered = 0
    for blueprint, history in conversations:
        facts = blueprint.persona.facts
        today = blueprint.reference_date

        def says(key, text, facts=facts, today=today):
            return states(fact_kind(key), facts[key], text, today)

        for before, after in pairwise(history):
            said = " ".join(t.customer for t in history[: before.index + 1])
            for key in asked_facts(before.reply, facts):
                if says(key, said):
                    continue  # already given: nothing left to answer
                if blueprint.expected_status == "AWAITING_RESPONSE" and fact_kind(key) == "service":
                    continue  # a vague customer does not know what it needs
                asked += 1
                # A hesitant customer gives one thing at a time: the rest comes next message.
                window = 2 if blueprint.persona.manner == "hesitant" else 1
                answers = " ".join(t.customer for t in history[after.index : after.index + window])
                answered += says(key, answers)
    assert asked >= 20
    assert answered / asked >= 0.9, (answered, asked)


def test_every_conversation_respects_the_turn_cap(conversations):
    assert all(1 <= len(history) <= blueprint.max_turns for blueprint, history in conversations)


ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


@pytest.fixture(scope="module")
def many_conversations(conversations):
    return conversations + [c for seed in range(4, 13) for c in _play(seed)]


def test_only_a_precise_customer_ever_writes_an_iso_date(many_conversations):
    spoken = precise = 0
    for blueprint, history in many_conversations:
        for turn in history:
            if blueprint.persona.manner == "precise":
                precise += bool(ISO_DATE.search(turn.customer))
                continue
            spoken += 1
            assert not ISO_DATE.search(turn.customer), (blueprint.key, turn.customer)
    assert spoken > 300 and precise > 0


def test_the_dates_a_customer_says_mean_the_persona_date_on_the_reference_day(
    many_conversations,
):
    checked = 0
    for blueprint, history in many_conversations:
        today = blueprint.reference_date
        facts = blueprint.persona.facts
        truth = {v for k, v in facts.items() if fact_kind(k) == "date"}
        for turn in history:
            for phrase in proposals(turn.customer):
                taken_back = turn.customer[: phrase.start].rstrip().endswith("not")
                if taken_back or blueprint.scenario_type == "correction_mid_conversation":
                    continue  # the day the customer corrects is said on purpose
                day = phrase.resolve(today)
                assert day is not None and day.isoformat() in truth, (phrase.text, turn.customer)
                checked += 1
    assert checked >= 50


def test_the_corrected_day_is_the_persona_date(many_conversations):
    checked = 0
    for blueprint, history in many_conversations:
        if blueprint.scenario_type != "correction_mid_conversation" or len(history) < 4:
            continue
        facts = blueprint.persona.facts
        truth = next(v for k, v in facts.items() if fact_kind(k) == "date")
        kept = [
            p
            for p in proposals(history[3].customer)
            if not history[3].customer[: p.start].rstrip().endswith("not")
        ]
        assert kept and kept[-1].resolve(blueprint.reference_date).isoformat() == truth
        checked += 1
    assert checked >= 5
