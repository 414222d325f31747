"""Blueprints: personas, intake facts, planned messages and expected statuses."""

from __future__ import annotations

import re
from datetime import date, time

from generator.dates import MONTH_NAMES, NUMBER_WORDS, WEEKDAY_NAMES, says_date, says_time
from generator.domain import hours_by_weekday
from generator.personas import faker_for, make_persona
from generator.scenarios import SCENARIO_TYPES, build_blueprints, plan_scenarios
from generator.speech import PHRASES
from tests.generator.conftest import TODAY

# Words of the date and time phrases customers use (filled in after typos, so never garbled).
DATE_WORDS = {w.casefold() for w in (*MONTH_NAMES, *WEEKDAY_NAMES)} | set(
    [
        "the",
        "of",
        "on",
        "at",
        "around",
        "next",
        "this",
        "week",
        "tomorrow",
        "day",
        "after",
        "half",
        "past",
        "quarter",
        "to",
        "ish",
        "o",
        "clock",
        "am",
        "pm",
        "morning",
        "afternoon",
        "evening",
        "st",
        "nd",
        "rd",
        "th",
        *NUMBER_WORDS,
    ]
)


def states(kind, value, text, today):
    """Does `text` state the fact in any words (a date as "next Tuesday" on `today`)?"""
    if kind == "date":
        return says_date(text, value, today) is not None
    if kind == "time":
        return says_time(text, value) is not None
    return value.casefold() in text.casefold()


def _blueprints(org, scenarios=24, seed=3, max_turns=5):
    plan = plan_scenarios(org, scenarios=scenarios, seed=seed)
    return build_blueprints(org, plan, max_turns=max_turns, seed=seed, start=TODAY)


def test_it_gives_every_persona_a_value_for_every_intake_field(org):
    keys = {f.key for f in org.intake_fields}
    for blueprint in _blueprints(org):
        assert set(blueprint.persona.facts) == keys
        assert all(v.strip() for v in blueprint.persona.facts.values())


def test_it_shapes_each_value_by_field_kind(org):
    by_day = hours_by_weekday(org.hours)
    services = {s.name for s in org.services}
    for blueprint in _blueprints(org):
        facts = blueprint.persona.facts
        for field in org.intake_fields:
            value = facts[field.key]
            if field.kind == "email":
                assert re.fullmatch(r"[a-z.]+@[a-z0-9.-]+\.[a-z]+", value), value
            elif field.kind == "phone":
                assert re.fullmatch(r"\+?[\d ()/-]{7,}", value), value
            elif field.kind == "date":
                day = date.fromisoformat(value)
                assert TODAY < day <= TODAY.replace(month=TODAY.month + 1)
                assert day.weekday() in by_day
            elif field.kind == "time":
                slot = time.fromisoformat(value)
                date_key = next(f.key for f in org.intake_fields if f.kind == "date")
                hours = by_day[date.fromisoformat(facts[date_key]).weekday()]
                assert time.fromisoformat(hours.opens) <= slot < time.fromisoformat(hours.closes)
            elif field.kind == "choice":
                assert value in (field.choices or services), (field.key, value)


def test_it_hands_over_every_intake_value_in_booking_messages(org):
    checked = 0
    for blueprint in _blueprints(org, scenarios=33):
        if blueprint.scenario_type != "booking_full_intake":
            continue
        said = " ".join(blueprint.planned_messages)
        for field in org.intake_fields:
            value = blueprint.persona.facts[field.key]
            assert states(field.kind, value, said, blueprint.reference_date), (field.key, said)
            checked += 1
        assert blueprint.expected_status == "COMPLETE"
    assert checked


def test_it_writes_typos_for_typo_heavy_customers_but_keeps_values(org):
    # Vocabulary of correctly spelled words: every phrase template plus the values said.
    vocabulary = set(DATE_WORDS)
    for clean, casual in PHRASES.values():
        vocabulary |= set(re.findall(r"[a-z]+", " ".join([*clean, *casual]).casefold()))
    blueprints = [b for b in _blueprints(org, scenarios=33) if b.persona.style == "typo_heavy"]
    assert blueprints
    for blueprint in blueprints:
        known = vocabulary | set(
            re.findall(r"[a-z]+", " ".join(blueprint.persona.facts.values()).casefold())
        )
        known |= set(re.findall(r"[a-z]+", " ".join(s.name for s in org.services).casefold()))
        known |= {"an", "a", "u", "r"} | set(re.findall(r"[a-z]+", blueprint.goal.casefold()))
        for message in blueprint.planned_messages:
            if blueprint.scenario_type == "safety_sensitive":
                continue
            assert set(re.findall(r"[a-z]+", message.casefold())) - known, message
        said = " ".join(blueprint.planned_messages)
        for field in org.intake_fields:
            if field.kind in ("phone", "email", "date", "name"):
                value = blueprint.persona.facts[field.key]
                assert states(field.kind, value, said, blueprint.reference_date), field.key


def test_it_corrects_to_the_date_the_persona_holds(org):
    date_key = next(f.key for f in org.intake_fields if f.kind == "date")
    corrections = [
        b
        for b in _blueprints(org, scenarios=33)
        if b.scenario_type == "correction_mid_conversation"
    ]
    assert corrections
    for blueprint in corrections:
        final = blueprint.persona.facts[date_key]
        today = blueprint.reference_date
        assert says_date(blueprint.planned_messages[-1], final, today)
        assert not says_date(blueprint.planned_messages[2], final, today)
        assert says_date(blueprint.reply_flow[0].reply, final, today)
        assert blueprint.reply_flow and blueprint.reply_flow[0].expected_status == "COMPLETE"


def test_it_sets_the_expected_status_per_type(org):
    expected = {
        "ambiguous_request": "AWAITING_RESPONSE",
        "safety_sensitive": "AWAITING_RESPONSE",
        "out_of_kb_question": "COMPLETE",
        "price_question": "COMPLETE",
        "prompt_injection": "COMPLETE",
    }
    for blueprint in _blueprints(org, scenarios=33):
        if blueprint.scenario_type in expected:
            assert blueprint.expected_status == expected[blueprint.scenario_type]


def test_it_plans_injections_and_out_of_kb_questions_from_the_org(org):
    for blueprint in _blueprints(org, scenarios=33):
        said = " ".join(blueprint.planned_messages).casefold()
        if blueprint.scenario_type == "prompt_injection":
            assert "ignore" in said and "system prompt" in said and "discount" in said
        if blueprint.scenario_type == "out_of_kb_question":
            assert not any(s.name.casefold() in said for s in org.services)


def test_it_plans_every_type_when_there_are_enough_scenarios(org):
    plan = plan_scenarios(org, scenarios=len(SCENARIO_TYPES), seed=9)
    assert {p.scenario_type for p in plan} == set(SCENARIO_TYPES)
    assert plan != plan_scenarios(org, scenarios=len(SCENARIO_TYPES), seed=10)


def test_it_caps_planned_messages_at_max_turns(org):
    for blueprint in _blueprints(org, max_turns=2):
        assert 1 <= len(blueprint.planned_messages) <= 2
        assert blueprint.max_turns == 2


def test_it_falls_back_to_en_us_for_an_unknown_locale(demo):
    _, used = faker_for("xx_XX", 1)
    assert used == "en_US"
    odd = demo.model_copy(update={"locale": "xx_XX"})
    persona = make_persona(
        odd, style="clean", service=demo.services[0], seed=1, start=TODAY, day_offset=3
    )
    assert persona.locale == "en_US"


def test_it_uses_the_org_locale_for_names(bikes):
    persona = make_persona(
        bikes, style="clean", service=bikes.services[0], seed=4, start=TODAY, day_offset=3
    )
    assert persona.locale == "de_DE"
    phone_key = next(f.key for f in bikes.intake_fields if f.kind == "phone")
    assert persona.facts[phone_key].startswith("+49 ")
