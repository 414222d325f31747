"""Rule-based intake extraction: field kinds, values, corrections and labelled free text."""

from __future__ import annotations

import pytest

from runs.simulator.contract import IntakeFieldRef
from runs.simulator.extraction import extract_fields, field_kind
from tests.simulator.helpers import FIELDS, SERVICES

TIME = IntakeFieldRef(key="preferred_time", label="Preferred time", required=False)
REASON = IntakeFieldRef(key="reason", label="Reason for visit", required=False)
ALL = [*FIELDS, TIME, REASON]


def _extract(*messages, fields=ALL, services=SERVICES):
    return extract_fields(fields, list(messages), services)


@pytest.mark.parametrize(
    ("key", "label", "kind"),
    [
        ("email", "Email address", "email"),
        ("contact", "E-mail", "email"),
        ("phone", "Phone number", "phone"),
        ("mobile", "Mobile", "phone"),
        ("preferred_date", "Preferred date", "date"),
        ("drop_off", "Drop-off day", "date"),
        ("preferred_time", "Preferred time", "time"),
        ("slot", "Slot", "time"),
        ("full_name", "Full name", "name"),
        ("service", "Service", "service"),
        ("repair", "Repair or service", "service"),
        ("treatment", "Treatment", "service"),
        ("reason", "Reason for visit", "text"),
        ("contact_number", "Contact number", "phone"),
        ("number", "Your best number", "phone"),
        # A number that is no phone (a Quick on tests/data/orgs/bike-repair-uk: the reference
        # bot extracted the customer's phone as their frame number).
        ("frame_number", "Frame number", "text"),
        ("registration_number", "Registration number", "text"),
        ("guests", "Number of guests", "text"),
        # A name that is not the customer's (tests/data/orgs/vet-ie: the reference bot put the
        # owner's name in "Pet's name and species").
        ("pet", "Pet's name and species", "text"),
        ("child_name", "Child's name", "text"),
        ("owner_name", "Owner's name", "name"),
        ("surname", "Your surname", "name"),
    ],
)
def test_field_kind_is_read_off_key_and_label(key, label, kind):
    assert field_kind(IntakeFieldRef(key=key, label=label, required=True)) == kind


def test_it_extracts_name_phone_and_email_from_one_sentence():
    assert _extract(
        "My name is Chelsea O'Sheehan. My phone number is +353 7 088 8500. "
        "My email is chelsea.sheehan@yahoo.com."
    ) == {
        "full_name": "Chelsea O'Sheehan",
        "phone": "+353 7 088 8500",
        "email": "chelsea.sheehan@yahoo.com",
    }


def test_it_extracts_a_casual_lower_case_introduction():
    assert _extract(
        "im Sian Devaney my number is +353 7 809 2640 email sian.devaney@gmail.com"
    ) == {
        "full_name": "Sian Devaney",
        "phone": "+353 7 809 2640",
        "email": "sian.devaney@gmail.com",
    }


@pytest.mark.parametrize(
    ("message", "name"),
    [
        ("Hi, this is Mary McAleese.", "Mary McAleese"),
        ("It's Conal Shaughnessy here", "Conal Shaughnessy"),
        ("my name's Ann", "Ann"),
    ],
)
def test_it_extracts_names_after_an_introduction(message, name):
    assert _extract(message)["full_name"] == name


@pytest.mark.parametrize(
    "message",
    ["I am looking for an appointment", "I'm not sure yet", "i am interested in a clean"],
)
def test_words_after_i_am_are_not_taken_for_a_name(message):
    assert "full_name" not in _extract(message)


def test_an_iso_date_is_a_date_and_not_a_phone_number():
    out = _extract("can i come 2026-12-09 at 10:00 if poss")
    assert out == {"preferred_date": "2026-12-09", "preferred_time": "10:00"}
    out = _extract("My number is 087 123 4567 and 2026-12-09 suits me")
    assert out["phone"] == "087 123 4567"
    assert out["preferred_date"] == "2026-12-09"


@pytest.mark.parametrize(
    "messages",
    [
        ["Sorry, my mistake: not 2026-12-09, please make it 2026-12-02."],
        [
            "I would like to come on 2026-12-09.",
            "oops sorry not 2026-12-09, make it 2026-12-02 pls",
        ],
        ["make it 2026-12-02, not 2026-12-09"],
    ],
)
def test_a_value_taken_back_gives_way_to_the_one_kept(messages):
    assert _extract(*messages)["preferred_date"] == "2026-12-02"


def test_a_later_message_overrides_an_earlier_value():
    out = _extract("call me on 087 123 4567", "actually my number is 086 765 4321")
    assert out == {"phone": "086 765 4321"}


@pytest.mark.parametrize(
    ("message", "time"),
    [
        ("Ideally at 11:00.", "11:00"),
        ("at 3pm please", "15:00"),
        ("not 10:00, make it 14:30", "14:30"),
        ("around 11 if possible", "11:00"),
        ("half nine or so", "09:30"),
        ("3ish would be perfect", "15:00"),
        ("in the morning, at 7 if poss", "07:00"),
        ("twelve o'clock please", "12:00"),
    ],
)
def test_it_extracts_times(message, time):
    assert _extract(message) == {"preferred_time": time}


def test_services_are_matched_from_the_list_longest_first():
    services = ["Check-up", "Child check-up", "Hygiene clean"]
    assert _extract("I'd like a CHILD CHECK-UP please", services=services) == {
        "service": "Child check-up"
    }
    assert _extract("a check-up for me", services=services) == {"service": "Check-up"}
    assert _extract("do you do sedation?", services=services) == {}
    assert _extract("a hygiene clean", services=[]) == {}


def test_a_free_text_field_is_read_from_label_colon_value():
    assert _extract("Reason for visit: loose filling on the left. Thanks") == {
        "reason": "loose filling on the left"
    }
    assert _extract("the reason is a chipped tooth") == {"reason": "a chipped tooth"}
    assert _extract("it is a chipped tooth") == {}


def test_only_the_fields_asked_for_are_returned():
    fields = [IntakeFieldRef(key="email", label="Email", required=True)]
    out = extract_fields(fields, ["My name is Ann Lee, ann@example.com, 2026-12-02"], SERVICES)
    assert out == {"email": "ann@example.com"}


def test_nothing_is_extracted_from_small_talk():
    assert _extract("hi there, how are you?", "thanks!") == {}


@pytest.mark.parametrize(
    ("message", "date", "words"),
    [
        ("next Tuesday around 11 would be great", "next Tuesday", "next Tuesday"),
        ("can i come in tomorrow morning, half nine", "tomorrow", "tomorrow"),
        ("Friday the 12th would suit me", "Friday the 12th", "Friday the 12th"),
        ("the 4th of December around 11", "4 December", "the 4th of December"),
        ("Hmm, the 9th I think", "the 9th", "the 9th"),
        ("early next week, say Tuesday", "next Tuesday", "next Tuesday"),
        ("not next Tuesday, make it Friday the 4th please", "Friday the 4th", "Friday the 4th"),
        ("I'm free on Saturday, 9am would be perfect", "Saturday", "on Saturday"),
    ],
)
def test_it_keeps_a_spoken_date_in_a_standard_spelling_and_the_customers_words(
    message, date, words
):
    from runs.simulator.extraction import extract_spoken

    found = extract_spoken(ALL, [message], SERVICES)
    assert found["preferred_date"] == (date, words)


def test_a_weekday_in_a_question_about_opening_hours_is_not_a_preferred_date():
    assert "preferred_date" not in _extract("how much is a hygiene clean and r u open Tuesday?")
    assert _extract("are you open on Saturday? if so, Saturday at 10 please") == {
        "preferred_date": "Saturday",
        "preferred_time": "10:00",
    }


def test_a_change_of_mind_keeps_the_service_the_customer_settles_on():
    assert (
        _extract("a check-up and exam please", "actually make that a hygiene clean instead")[
            "service"
        ]
        == "Hygiene clean"
    )
    assert _extract("a hygiene clean instead of the check-up and exam") == {
        "service": "Hygiene clean"
    }
    assert _extract("not the hygiene clean, the check-up and exam") == {
        "service": "Check-up and exam"
    }
