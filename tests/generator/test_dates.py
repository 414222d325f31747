"""Spoken dates and times: the phrases customers say, and the one parser that reads them back."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta

import pytest

from generator.dates import (
    date_options,
    find_dates,
    find_times,
    proposals,
    say_date,
    say_time,
    says_date,
    says_time,
    time_options,
)
from generator.scenarios import build_blueprints, plan_scenarios
from tests.generator.conftest import TODAY

TUESDAY = date(2026, 11, 24)
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


@pytest.mark.parametrize(
    ("said", "day"),
    [
        ("tomorrow", date(2026, 11, 25)),
        ("the day after tomorrow", date(2026, 11, 26)),
        ("this Friday", date(2026, 11, 27)),
        ("on Friday", date(2026, 11, 27)),
        ("Tuesday", date(2026, 12, 1)),  # today is Tuesday: the next one
        ("next Tuesday", date(2026, 12, 1)),
        ("next Monday", date(2026, 11, 30)),
        ("next Friday", date(2026, 12, 4)),  # the Friday of next week, not this one
        ("Friday next week", date(2026, 12, 4)),
        ("early next week, say Tuesday", date(2026, 12, 1)),
        ("the 4th", date(2026, 12, 4)),
        ("Friday the 4th", date(2026, 12, 4)),
        ("Friday the 12th", date(2027, 2, 12)),  # the next Friday that is a 12th
        ("the 4th of December", date(2026, 12, 4)),
        ("December 4th", date(2026, 12, 4)),
        ("4 Dec", date(2026, 12, 4)),
        ("Friday 4 December 2026", date(2026, 12, 4)),
        ("2026-12-04", date(2026, 12, 4)),
        ("4/12/2026", None),  # the 4th of December or the 12th of April
    ],
)
def test_a_spoken_date_means_one_day_relative_to_the_reference_day(said, day):
    found = find_dates(f"could I come in {said} please")
    assert len(found) == 1, found
    assert found[0].resolve(TUESDAY) == day


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("at 11", "11:00"),
        ("around 11", "11:00"),
        ("11ish", "11:00"),
        ("eleven o'clock", "11:00"),
        ("half nine", "09:30"),
        ("half past 2", "14:30"),
        ("quarter past 3", "15:15"),
        ("quarter to 4", "15:45"),
        ("at 3", "15:00"),  # a bare 1-7 is the afternoon
        ("at 7 in the morning", "07:00"),
        ("at 10 in the evening", "22:00"),
        ("3pm", "15:00"),
        ("10.30am", "10:30"),
        ("14:30", "14:30"),
        ("noon", "12:00"),
    ],
)
def test_a_spoken_time_is_one_clock_time(said, value):
    found = find_times(f"next Tuesday {said} if possible")
    assert [t.value for t in found] == [value]


@pytest.mark.parametrize(
    "text",
    ["it takes about 45 minutes", "a table for one", "half an hour", "around 50 EUR", "4.12.26"],
)
def test_durations_counts_prices_and_dates_are_not_times(text):
    assert find_times(text) == []


def test_a_weekday_in_a_question_about_opening_hours_proposes_no_day():
    assert proposals("how much is a clean and r u open Tuesday?") == []
    assert proposals("Are you open on Sunday, and until what time?") == []
    assert [p.text for p in proposals("can I come Tuesday? around 11")] == ["Tuesday"]


def test_every_phrase_offered_for_a_day_reads_back_as_that_day():
    for today in (TUESDAY, TODAY, date(2026, 12, 27), date(2027, 2, 26)):
        for ahead in range(1, 35):
            day = today + timedelta(days=ahead)
            options = date_options(day, today)
            assert options, (today, day)
            for option in options:
                found = find_dates(option)
                assert len(found) == 1 and found[0].resolve(today) == day, (today, option)
            # Without a reference day only the day and month are said.
            for option in date_options(day, None):
                assert any(m in option for m in (day.strftime("%B"),)), option


def test_next_weekday_is_said_only_where_both_readings_agree():
    for ahead in range(1, 15):
        day = TUESDAY + timedelta(days=ahead)
        if f"next {day.strftime('%A')}" in date_options(day, TUESDAY):
            assert 5 <= ahead <= 7  # next week's day, and the first such day after today


def test_every_time_offered_reads_back_as_that_time():
    for hour in range(7, 20):
        for minute in (0, 15, 30, 45):
            hhmm = f"{hour:02d}:{minute:02d}"
            for option in time_options(hhmm, "en_IE"):
                assert says_time(option, hhmm), (hhmm, option)


def test_a_precise_customer_says_iso_and_others_never_do():
    rng = random.Random(4)
    day = TUESDAY + timedelta(days=9)
    assert say_date(day, TUESDAY, rng, "precise") == day.isoformat()
    assert say_time("09:30", rng, "precise") == "at 09:30"
    for manner in ("direct", "chatty", "hesitant"):
        for _ in range(40):
            said = say_date(day, TUESDAY, rng, manner)
            assert not ISO_DATE.search(said)
            assert says_date(said, day.isoformat(), TUESDAY), said


def test_no_planned_message_of_a_non_precise_customer_holds_an_iso_date(org):
    seen = precise = 0
    for seed in range(1, 16):
        plan = plan_scenarios(org, scenarios=24, seed=seed)
        for blueprint in build_blueprints(org, plan, max_turns=5, seed=seed, start=TODAY):
            assert blueprint.reference_date == TODAY
            said = " ".join([*blueprint.planned_messages, *(s.reply for s in blueprint.reply_flow)])
            if blueprint.persona.manner == "precise":
                precise += 1
                continue
            seen += 1
            assert not ISO_DATE.search(said), (seed, blueprint.key, said)
    assert seen > 300 and 0 < precise < seen / 5


def test_the_dates_customers_plan_to_say_are_the_persona_dates(org):
    date_key = next(f.key for f in org.intake_fields if f.kind == "date")
    checked = 0
    for seed in range(1, 16):
        plan = plan_scenarios(org, scenarios=24, seed=seed)
        for blueprint in build_blueprints(org, plan, max_turns=5, seed=seed, start=TODAY):
            if blueprint.scenario_type not in ("booking_full_intake", "typo_heavy_booking"):
                continue
            said = " ".join(blueprint.planned_messages)
            days = {p.resolve(TODAY) for p in proposals(said)}
            assert days == {date.fromisoformat(blueprint.persona.facts[date_key])}, said
            checked += 1
    assert checked >= 20


def test_manners_are_seeded_and_typo_heavy_customers_are_never_precise(org):
    plan = plan_scenarios(org, scenarios=24, seed=3)
    first = build_blueprints(org, plan, max_turns=5, seed=3, start=TODAY)
    again = build_blueprints(org, plan, max_turns=5, seed=3, start=TODAY)
    assert [b.persona.manner for b in first] == [b.persona.manner for b in again]
    assert first == again
    for seed in range(1, 10):
        plan = plan_scenarios(org, scenarios=24, seed=seed)
        for blueprint in build_blueprints(org, plan, max_turns=5, seed=seed, start=TODAY):
            if blueprint.persona.style == "typo_heavy":
                assert blueprint.persona.manner != "precise"
