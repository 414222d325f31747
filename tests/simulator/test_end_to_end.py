"""The demo org end to end: generate a Quick test set, play every blueprint against `reference`."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

import pytest

from generator.dates import proposals
from generator.pipeline import generate_artifacts
from generator.schemas import Blueprint
from judge.fields import values_match
from judge.schemas import Turn
from qalab.llm import get_engine
from qalab.llm.base import NullLedger
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
from runs.simulator.adapters import get_responder
from runs.simulator.contract import (
    ChatMessage,
    IntakeFieldRef,
    KbEntry,
    ResponderRequest,
)
from runs.simulator.customer import customer_next_message

MAX_TURNS = 4
TOKEN_CEILING = 50_000
BOOKING_TYPES = ("booking_full_intake", "typo_heavy_booking")
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"\+?\d[\d ()-]{6,}\d")


@dataclass
class Played:
    blueprint: Blueprint
    turns: list[Turn]


@dataclass
class Session:
    ledger: NullLedger
    required: list[str]
    played: list[Played]
    kinds: dict[str, str]


@pytest.fixture(scope="module")
def session():
    ledger = NullLedger()
    engine = get_engine("offline", ledger=ledger)
    artifacts = generate_artifacts(
        load_org_folder(DEMO_ORG_DIR),
        scenarios=12,
        max_turns=MAX_TURNS,
        mix=(20, 50, 30),
        seed=1,
        engine=engine,
        today=datetime.date(2026, 11, 22),
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
        turns: list[Turn] = []
        while (
            message := customer_next_message(blueprint, turns, engine=engine, purpose="c")
        ) is not None:
            assert len(turns) < 10, "the customer never stops"
            history = [
                m
                for t in turns
                for m in (
                    ChatMessage(role="customer", content=t.customer),
                    ChatMessage(role="assistant", content=t.reply),
                )
            ]
            reply = responder.respond(
                ResponderRequest(
                    session_id=blueprint.key,
                    organization=artifacts.manifest.org_name,
                    locale=blueprint.persona.locale,
                    kb=kb,
                    intake_fields=intake,
                    messages=[*history, ChatMessage(role="customer", content=message)],
                ),
                engine=engine,
                purpose="r",
            )
            turns.append(
                Turn(
                    index=len(turns),
                    customer=message,
                    reply=reply.reply,
                    extracted=reply.extracted,
                    status=reply.status,
                )
            )
        played.append(Played(blueprint, turns))
    kinds = {f.key: f.kind for f in artifacts.manifest.intake_fields}
    return Session(ledger, [f.key for f in intake if f.required], played, kinds)


def test_every_conversation_has_one_to_max_turns(session):
    assert len(session.played) == 12
    for p in session.played:
        assert 1 <= len(p.turns) <= MAX_TURNS, p.blueprint.key
        assert [t.index for t in p.turns] == list(range(len(p.turns)))


def test_the_customer_states_only_values_it_holds(session):
    checked = 0
    for p in session.played:
        facts = set(p.blueprint.persona.facts.values())
        said = " ".join(t.customer for t in p.turns)
        values = ISO_DATE.findall(said) + EMAIL.findall(said)
        values += PHONE.findall(ISO_DATE.sub(" ", EMAIL.sub(" ", said)))
        for value in values:
            checked += 1
            # A customer who corrects themselves says the wrong value, then takes it back.
            taken_back = f"not {value}" in said
            assert value.strip() in facts or taken_back, (p.blueprint.key, value, said)
        # Dates said in words mean the persona's date on the reference day, or one taken back.
        today = p.blueprint.reference_date
        days = {d.resolve(today) for d in proposals(said)}
        dropped = {d.resolve(today) for d in proposals(said) if said[: d.start].endswith("not ")}
        for day in days - dropped:
            checked += 1
            assert day is not None and day.isoformat() in facts, (p.blueprint.key, day, said)
    assert checked >= 10  # the bookings state phones, emails and dates


def test_booking_scenarios_end_complete_with_the_persona_facts(session):
    bookings = [p for p in session.played if p.blueprint.scenario_type in BOOKING_TYPES]
    assert {p.blueprint.scenario_type for p in bookings} == set(BOOKING_TYPES)
    for p in bookings:
        last = p.turns[-1]
        assert last.status == "COMPLETE", (p.blueprint.key, last.reply)
        facts = p.blueprint.persona.facts
        assert set(last.extracted) >= set(session.required), p.blueprint.key
        for key in session.required:
            got = last.extracted[key]
            # Same value up to its spelling: "next Tuesday" is the date it means that day.
            ok = values_match(session.kinds[key], got, facts[key], p.blueprint.reference_date)
            assert ok, (p.blueprint.key, key, got, facts[key])


def test_the_whole_quick_run_stays_within_the_token_ceiling(session):
    by_role = session.ledger.used_by_role()
    assert set(by_role) == {"generator", "simulator", "responder"}
    assert all(tokens > 0 for tokens in by_role.values())
    assert session.ledger.used == sum(by_role.values())
    assert session.ledger.used < TOKEN_CEILING
