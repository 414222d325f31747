"""The customer simulator: planned messages, reply flow, then answers from persona facts only."""

from __future__ import annotations

import re
from datetime import date

import pytest

from generator.schemas import Blueprint, Persona, ReplyStep
from judge.fields import values_match
from judge.schemas import Turn
from qalab.llm import Engine
from runs.simulator.customer import asked_facts, customer_next_message, fact_kind, states
from runs.simulator.extraction import extract_fields
from tests.simulator.helpers import FIELDS, SERVICES

TODAY = date(2026, 11, 24)  # a Tuesday: the conversation's reference day
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")

FACTS = {
    "full_name": "Ann Lee",
    "phone": "+353 1 234 5678",
    "email": "ann.lee@example.com",
    "service": "Hygiene clean",
    "preferred_date": "2026-12-02",
    "preferred_time": "09:30",
}
ASK_NAME_PHONE = "Could you tell me your full name and phone number?"


def _blueprint(
    *,
    planned=("I would like to book an appointment.",),
    flow=(),
    expected="COMPLETE",
    style="clean",
    max_turns=6,
    key="sc-01",
    facts=None,
    manner="direct",
    today=TODAY,
):
    return Blueprint(
        key=key,
        scenario_type="booking_full_intake",
        title="Book a hygiene clean",
        goal="Book a hygiene clean",
        fixture_key="fx-01",
        persona=Persona(
            name="Ann Lee", locale="en_IE", style=style, facts=facts or FACTS, manner=manner
        ),
        planned_messages=list(planned),
        expected_status=expected,
        reply_flow=[ReplyStep(reply=r, expected_status=expected) for r in flow],
        max_turns=max_turns,
        reference_date=today,
    )


def _said(key, text, today=TODAY):
    """Does `text` state the persona's fact `key`, in any words?"""
    return states(fact_kind(key), FACTS[key], text, today)


def _history(*pairs):
    """Turns from (customer, reply, status) triples."""
    return [
        Turn(index=n, customer=c, reply=r, status=s, extracted={})
        for n, (c, r, s) in enumerate(pairs)
    ]


def _next(blueprint, history, engine):
    return customer_next_message(blueprint, history, engine=engine, purpose="test")


def test_it_plays_the_planned_messages_then_the_reply_flow(engine):
    bp = _blueprint(planned=["first", "second"], flow=["third"])
    history = []
    said = []
    for _ in range(3):
        message = _next(bp, history, engine)
        said.append(message)
        # The responder says COMPLETE at once: planned messages are still played.
        history = [*history, *_history((message, "Noted, thank you.", "COMPLETE"))]
        history = [t.model_copy(update={"index": n}) for n, t in enumerate(history)]
    assert said == ["first", "second", "third"]
    assert _next(bp, history, engine) is None


@pytest.mark.parametrize(
    ("reply", "keys"),
    [
        (ASK_NAME_PHONE, ["full_name", "phone"]),
        (
            "Which service would you like, and could you tell me your full name?",
            ["full_name", "service"],
        ),
        ("Could you tell me your preferred date?", ["preferred_date"]),
        ("Could you tell me your preferred time?", ["preferred_time"]),
        ("Thanks. And your email address?", ["email"]),
    ],
)
def test_it_answers_what_was_asked_from_persona_facts_only(engine, reply, keys):
    bp = _blueprint()
    history = _history((bp.planned_messages[0], reply, "AWAITING_RESPONSE"))
    message = _next(bp, history, engine)
    assert message is not None
    for key in keys:
        assert _said(key, message), (key, message)
    unasked = [key for key in FACTS if key not in keys and _said(key, message)]
    assert unasked == [], f"volunteered {unasked}: {message}"
    assert not ISO_DATE.search(message), message
    # The responder can read the answer back: the same values, dates counted from TODAY.
    extracted = extract_fields(FIELDS, [message], SERVICES)
    assert set(extracted) == {k for k in keys if k != "preferred_time"}, (extracted, message)
    kinds = {"preferred_date": "date", "phone": "phone", "email": "email", "service": "choice"}
    for key, value in extracted.items():
        assert values_match(kinds.get(key, "text"), value, FACTS[key], TODAY), (key, value)


def test_asked_facts_reads_questions_only():
    assert asked_facts(ASK_NAME_PHONE, FACTS) == ["full_name", "phone"]
    assert asked_facts("We will need your phone number.", FACTS) == []
    assert asked_facts("Your name is noted. When would suit you?", FACTS) == ["preferred_date"]
    assert asked_facts("Which service would you like?", FACTS) == ["service"]


def test_asked_facts_tells_apart_keys_that_share_a_word():
    assert asked_facts("Could you tell me your preferred date?", FACTS) == ["preferred_date"]
    assert asked_facts("Could you tell me your preferred time?", FACTS) == ["preferred_time"]


def test_it_does_not_repeat_a_fact_already_given(engine):
    bp = _blueprint(planned=["I'd like to book. My name is Ann Lee."])
    history = _history((bp.planned_messages[0], ASK_NAME_PHONE, "AWAITING_RESPONSE"))
    message = _next(bp, history, engine)
    assert FACTS["phone"] in message
    assert FACTS["full_name"] not in message
    # Said in other words, a date is said all the same.
    bp = _blueprint(planned=["I'd like to book for next Wednesday."])
    history = _history((bp.planned_messages[0], "And your preferred date?", "AWAITING_RESPONSE"))
    assert _next(bp, history, engine) is None


def test_it_stops_when_nothing_it_holds_is_asked(engine):
    bp = _blueprint()
    for reply in ("Could you tell me your insurance provider?", "Thanks, noted.", ""):
        history = _history((bp.planned_messages[0], reply, "AWAITING_RESPONSE"))
        assert _next(bp, history, engine) is None, reply


def test_it_stops_at_max_turns(engine):
    bp = _blueprint(planned=["one", "two", "three"], max_turns=2)
    history = _history(
        ("one", "Noted.", "AWAITING_RESPONSE"), ("two", ASK_NAME_PHONE, "AWAITING_RESPONSE")
    )
    assert _next(bp, history, engine) is None
    assert _next(bp, history[:1], engine) == "two"


def test_a_planned_message_also_answers_what_was_just_asked(engine):
    bp = _blueprint(planned=["I would like to book an appointment.", "Is next week possible?"])
    history = _history((bp.planned_messages[0], ASK_NAME_PHONE, "AWAITING_RESPONSE"))
    message = _next(bp, history, engine)
    assert message.startswith("Is next week possible?")
    assert FACTS["full_name"] in message and FACTS["phone"] in message
    assert FACTS["email"] not in message and FACTS["preferred_date"] not in message


def test_a_planned_value_is_not_topped_up_with_a_second_one(engine):
    # The customer will correct the date later: the planned (wrong) date stays the only one.
    planned = ["I would like to book an appointment.", "I would like to come on 2026-12-09."]
    bp = _blueprint(planned=planned)
    history = _history((planned[0], "Could you tell me your preferred date?", "AWAITING_RESPONSE"))
    assert _next(bp, history, engine) == planned[1]


def test_it_stops_once_complete_with_nothing_planned_left(engine):
    bp = _blueprint()
    done = _history((bp.planned_messages[0], f"Booked. {ASK_NAME_PHONE}", "COMPLETE"))
    assert _next(bp, done, engine) is None
    waiting = _history((bp.planned_messages[0], f"Booked. {ASK_NAME_PHONE}", "AWAITING_RESPONSE"))
    assert _next(bp, waiting, engine) is not None


def test_a_customer_expected_to_be_kept_waiting_does_not_name_a_service(engine):
    planned = ["hi, need to come in for something"]
    vague = _blueprint(planned=planned, expected="AWAITING_RESPONSE")
    booking = _blueprint(planned=planned, expected="COMPLETE")
    ask_service = _history((planned[0], "Which service would you like?", "AWAITING_RESPONSE"))
    assert _next(vague, ask_service, engine) is None
    answer = _next(booking, ask_service, engine)
    assert FACTS["service"] in answer
    assert extract_fields(FIELDS, [answer], SERVICES) == {"service": FACTS["service"]}
    both = "Which service would you like, and could you tell me your full name?"
    message = _next(vague, _history((planned[0], both, "AWAITING_RESPONSE")), engine)
    assert message is not None and FACTS["full_name"] in message
    assert not [k for k, v in FACTS.items() if k != "full_name" and v in message], message


@pytest.mark.parametrize("key", [f"sc-{n:02d}" for n in range(1, 9)])
def test_typo_heavy_answers_keep_the_exact_values(engine, key):
    bp = _blueprint(style="typo_heavy", key=key)
    messages = []
    for reply in (ASK_NAME_PHONE, "Could you tell me your email address and preferred date?"):
        history = _history((bp.planned_messages[0], reply, "AWAITING_RESPONSE"))
        messages.append(_next(bp, history, engine))
    name_phone, email_date = messages
    assert FACTS["full_name"] in name_phone and FACTS["phone"] in name_phone
    assert FACTS["email"] in email_date and _said("preferred_date", email_date), email_date
    casual = f"its {FACTS['full_name']} number is {FACTS['phone']}"
    assert name_phone != casual  # garbled, only the values survive intact


def test_styles_change_the_wording_not_the_values(engine):
    said = {}
    for style in ("clean", "casual", "typo_heavy"):
        bp = _blueprint(style=style)
        history = _history((bp.planned_messages[0], ASK_NAME_PHONE, "AWAITING_RESPONSE"))
        said[style] = _next(bp, history, engine)
        assert FACTS["full_name"] in said[style] and FACTS["phone"] in said[style]
    assert len(set(said.values())) == 3
    # Clean: whole sentences; casual: lower-case fragments kept apart by a comma.
    assert re.fullmatch(r"(?:[A-Z][^.]*\.\s?){2}", said["clean"].replace("+353", "353")), said
    assert said["casual"][:1].islower() and ", " in said["casual"], said["casual"]


def test_every_message_is_metered_as_the_simulator(ledger, engine):
    bp = _blueprint()
    history = _history((bp.planned_messages[0], ASK_NAME_PHONE, "AWAITING_RESPONSE"))
    _next(bp, history, engine)
    assert ledger.used > 0
    assert [c["role"] for c in ledger.calls] == ["simulator"]


def test_a_planned_message_with_nothing_to_answer_costs_no_call(ledger, engine):
    bp = _blueprint()
    assert _next(bp, [], engine) == bp.planned_messages[0]
    assert ledger.calls == [] and ledger.used == 0


def test_a_casual_answer_keeps_its_fragments_apart():
    import random

    from runs.simulator.customer import _answer

    facts = {"full_name": "Ann Lee", "phone": "+353 1 234 5678"}
    for seed in range(6):
        casual = _answer(
            ["full_name", "phone"], _blueprint(style="casual", facts=facts), random.Random(seed)
        )
        name, phone = casual.split(", ")
        assert "Ann Lee" in name and phone.endswith("+353 1 234 5678"), casual
        clean = _answer(["full_name", "phone"], _blueprint(facts=facts), random.Random(seed))
        first, second = clean.split(". ", 1)
        assert "Ann Lee" in first and second.endswith("+353 1 234 5678."), clean


def test_fact_kind_checks_the_key_against_the_value() -> None:
    assert fact_kind("frame_number", "WTU12345C67") == "other"  # no phone number
    assert fact_kind("phone", "+353 1 234 5678") == "phone"
    assert fact_kind("datum", "2026-12-02") == "date"
    assert fact_kind("date_of_birth", "3 July 1953") == "other"  # said as written, not as a day
    assert fact_kind("pet_name", "Bella", "Ann Lee") == "other"
    assert fact_kind("full_name", "Ann Lee", "Ann Lee") == "name"


def test_it_answers_a_free_text_question_with_the_persona_value(engine: Engine) -> None:
    facts = {**FACTS, "frame_number": "WTU12345C67"}
    history = _history(
        ("Hi, I'd like to book.", "Could you tell me your frame number?", "AWAITING_RESPONSE")
    )
    message = _next(_blueprint(facts=facts), history, engine)
    assert "Frame number: WTU12345C67" in message
    assert "number is" not in message
