"""Free-text intake values: the org's examples when it gives some, else a value of the kind the
label asks for (read off its head noun), never the label itself."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from generator.domain import DOMAINS
from generator.field_values import ANIMALS, kind_of, parse_label
from generator.personas import make_persona
from qalab.domain import IntakeFieldSpec, OrgContext
from qalab.org_folder import load_org_folder

ORGS = Path(__file__).resolve().parents[1] / "data" / "orgs"
START = date(2026, 3, 2)


def _org(name: str) -> OrgContext:
    return load_org_folder(ORGS / name)


def _values(org: OrgContext, label: str, seeds: range = range(12)) -> list[str]:
    """What customers of `org` give for a text field `label`, one persona per seed."""
    field = IntakeFieldSpec(key="asked", label=label)
    org = org.model_copy(update={"intake_fields": [*org.intake_fields, field]})
    return [
        make_persona(
            org,
            style="clean",
            service=org.services[seed % len(org.services)],
            seed=seed,
            start=START,
            day_offset=3,
        ).facts["asked"]
        for seed in seeds
    ]


@pytest.mark.parametrize(
    ("label", "locale", "kinds"),
    [
        ("Bike make and type", "en_GB", ["make", "type"]),
        ("Pet's name and species", "en_IE", ["name", "animal"]),
        ("Frame number", "en_GB", ["id"]),
        ("Registration number", "en_GB", ["plate"]),
        ("Phone number", "en_GB", ["phone"]),
        ("Date of birth", "en_GB", ["date"]),
        ("Number of people", "en_GB", ["count"]),
        ("Nombre de personnes", "fr_FR", ["count"]),
        ("What is wrong with it", "en_GB", ["problem"]),
        ("Year / make / model", "en_US", ["year", "make", "model"]),
        ("Type of appointment", "en_GB", ["service"]),
        ("Stylist (if you have one)", "en_GB", ["staff"]),
        ("Imię i nazwisko", "pl_PL", ["name", "name"]),
        ("Favourite flavour", "en_GB", [""]),
    ],
)
def test_it_reads_what_a_label_asks_for(label: str, locale: str, kinds: list[str]) -> None:
    assert [kind_of(part) for part in parse_label(label, locale)] == kinds


def test_a_make_and_type_is_a_real_combination_of_the_domain() -> None:
    things = next(d for d in DOMAINS if d.name == "bicycle").things
    said = {f"{make} {kind}" for make, _, kind in things}
    values = _values(_org("bike-repair-uk"), "Bike make and type")
    assert set(values) <= said
    assert len(set(values)) >= 3


def test_a_pet_has_a_name_and_a_species_the_clinic_treats() -> None:
    vet = _org("vet-ie")
    for value in _values(vet, "Pet's name and species"):
        name, species = value.split(", ")
        assert name.istitle() and species in ANIMALS
        assert species in vet.offering


def test_a_frame_number_is_an_identifier_that_reads_as_no_phone_number() -> None:
    for value in _values(_org("bike-repair-uk"), "Frame number"):
        assert re.fullmatch(r"[A-Z]{3}\d{5}[A-Z]\d{2}", value), value


def test_a_registration_is_a_plate_and_a_birth_date_a_past_date() -> None:
    org = _org("bike-repair-uk")
    for plate in _values(org, "Registration number"):
        assert re.fullmatch(r"[A-Z0-9 -]{5,10}", plate) and re.search(r"\d", plate), plate
    for value in _values(org, "Date of birth"):
        born = datetime.strptime(value, "%d %B %Y").date()
        assert 18 <= (START - born).days // 365 <= 80


@pytest.mark.parametrize(
    "label",
    [
        "Bike make and type",
        "What is wrong with it",
        "Favourite flavour",
        "Frame size",
        "Have you been here before?",
        "How many bikes",
        "Home address",
        "Company name",
        "Pet",
    ],
)
def test_a_value_is_never_the_label_and_fits_in_a_sentence(label: str) -> None:
    for value in _values(_org("bike-repair-uk"), label):
        assert value.strip() and label.casefold() not in value.casefold()
        assert "\n" not in value and not re.search(r"\.(\s|$)", value), value


def test_it_answers_with_the_org_examples_when_it_gives_some() -> None:
    org = _org("bike-repair-uk")
    field = next(f for f in org.intake_fields if f.key == "heard_from")
    said = [
        make_persona(
            org, style="clean", service=org.services[0], seed=s, start=START, day_offset=3
        ).facts["heard_from"]
        for s in range(20)
    ]
    assert set(said) <= set(field.examples)
    assert len(set(said)) >= 2


def test_text_values_are_seeded_and_leave_the_other_facts_as_they_were() -> None:
    org = _org("bike-repair-uk")
    plain = org.model_copy(
        update={"intake_fields": [f for f in org.intake_fields if f.kind != "text"]}
    )
    for seed in range(5):
        kwargs = {"style": "clean", "service": org.services[1], "seed": seed, "start": START}
        one = make_persona(org, day_offset=4, **kwargs)
        assert make_persona(org, day_offset=4, **kwargs) == one
        without = make_persona(plain, day_offset=4, **kwargs).facts
        assert {k: v for k, v in one.facts.items() if k in without} == without


@pytest.mark.parametrize(
    ("field", "error"),
    [
        ({"examples": ["x"] * 21}, "at most 20 items"),
        ({"examples": ["x" * 201]}, "at most 200 characters"),
        ({"examples": ["Trek\nMarlin"]}, "one line"),
        ({"examples": ["  "]}, "at least 1 character"),
        ({"examples": [5]}, "valid string"),
        ({"kind": "phone", "examples": ["+44 113 496 0000"]}, "examples are for text fields"),
    ],
)
def test_example_values_are_validated(field: dict[str, Any], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        IntakeFieldSpec(key="bike", label="Bike make and type", **field)
