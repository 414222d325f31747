"""Seeded customer personas: Faker identities in the org's locale and values for every intake field."""

from __future__ import annotations

import random
import re
import unicodedata
from datetime import date
from functools import lru_cache

from faker import Faker
from faker.config import AVAILABLE_LOCALES

from generator.domain import open_slot
from generator.field_values import Ask, make_text_value
from generator.rng import derive_seed, rng_for
from generator.schemas import Manner, Persona, WritingStyle
from qalab.domain import IntakeFieldSpec, OrgContext, ServiceSpec

_TYPO_EXEMPT = re.compile(r"[\d@{}/:]")


@lru_cache(maxsize=8)
def _faker(locale: str) -> Faker:
    # Building a Faker loads every provider (slow); one per locale, re-seeded before each use.
    return Faker(locale)


def faker_for(locale: str, seed: int) -> tuple[Faker, str]:
    """A seeded Faker for `locale`, or for en_US when Faker does not know it."""
    used = locale if locale in AVAILABLE_LOCALES else "en_US"
    fake = _faker(used)
    fake.seed_instance(seed)
    return fake, used


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _email(name: str, fake: Faker) -> str:
    parts = [p for p in re.findall(r"[a-z]+", _ascii(name).casefold()) if len(p) > 1]
    local = ".".join(parts[-2:]) or "customer"
    return f"{local}@{fake.free_email_domain()}"


def service_field(org: OrgContext) -> IntakeFieldSpec | None:
    """The intake field that holds the service: a choice field without its own choices."""
    choices = [f for f in org.intake_fields if f.kind == "choice" and not f.choices]
    named = [f for f in choices if "service" in f.key or "service" in f.label.casefold()]
    return (named or choices or [None])[0]


def phone_for(org: OrgContext, fake: Faker) -> str:
    """A customer phone number shaped like the org's own (same country code and grouping).

    Faker lacks phone formats for many locales (en_IE falls back to US numbers with extensions),
    so when the org has an international number we keep its country code and grouping.
    """
    own = org.contact.phone.strip()
    match = re.match(r"^(\+\d{1,3})(.*\d)$", own)
    if match:
        # The first digit after the country code stays (a mobile/area prefix), the rest is random.
        rest = re.sub(r"\d", "#", match.group(2))
        rest = re.sub(r"#", lambda m: "%", rest, count=1)
        return match.group(1) + fake.numerify(rest.replace("%", str(fake.random_int(1, 9))))
    return re.split(r"\s*(?:x|ext\.?)\s*\d+$", fake.phone_number())[0]


def make_persona(
    org: OrgContext,
    *,
    style: WritingStyle,
    service: ServiceSpec,
    seed: int,
    start: date,
    day_offset: int,
    manner: Manner = "direct",
) -> Persona:
    """A customer with a value for every intake field; dates on open days, times within hours,
    free text of the kind its label asks for (generator/field_values.py), never the label.

    Facts are canonical (dates YYYY-MM-DD, times HH:MM): they are the ground truth, whatever
    words the customer uses for them in the conversation (see generator/dates/)."""
    fake, locale = faker_for(org.locale, seed)
    rng = random.Random(seed)
    name = f"{fake.first_name()} {fake.last_name()}"
    when, at = open_slot(org.hours, start, day_offset, rng.randrange(16))
    the_service = service_field(org)
    facts: dict[str, str] = {}
    for field in org.intake_fields:
        if field.kind == "name":
            facts[field.key] = name
        elif field.kind == "phone":
            facts[field.key] = phone_for(org, fake)
        elif field.kind == "email":
            facts[field.key] = _email(name, fake)
        elif field.kind == "date":
            facts[field.key] = when.isoformat()
        elif field.kind == "time":
            facts[field.key] = at
        elif field.kind == "choice" and field.choices and field is not the_service:
            facts[field.key] = rng.choice(field.choices)
        elif field.kind == "choice":
            facts[field.key] = service.name
        else:
            facts[field.key] = ""  # below: its own random streams leave the others as they were
    person = {"name": name, "phone": phone_for(org, fake), "email": _email(name, fake)}
    for kind in ("phone", "email"):
        person[kind] = next(
            (facts[f.key] for f in org.intake_fields if f.kind == kind), person[kind]
        )
    for field in org.intake_fields:
        if field.kind == "text":
            ask = Ask(
                field=field,
                org=org,
                service=service,
                fake=faker_for(org.locale, derive_seed(seed, "text", field.key))[0],
                rng=rng_for(seed, "text", field.key),
                start=start,
                person=person,
            )
            facts[field.key] = make_text_value(ask)
    return Persona(name=name, locale=locale, style=style, facts=facts, manner=manner)


def pick_manner(style: WritingStyle, rng: random.Random) -> Manner:
    """How a customer converses: about one in ten writes like a form ("precise": ISO dates),
    never a typo-heavy one; the others are direct, chatty or hesitant in equal shares."""
    if style != "typo_heavy" and rng.random() < 0.1:
        return "precise"
    manners: list[Manner] = ["direct", "chatty", "hesitant"]
    return rng.choice(manners)


def _garble(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)
    if not (word[i].isalpha() and word[i + 1].isalpha()) or word[i] == word[i + 1]:
        return word
    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return swapped if rng.random() < 0.6 else word[:i] + word[i + 1 :]


def misspell(text: str, rng: random.Random, rate: float = 0.3) -> str:
    """Typo-heavy rewrite: lower case, swapped/dropped letters; values and placeholders untouched.

    At least one word changes whenever the text has a word long enough to misspell.
    """
    words = text.split(" ")
    eligible = [n for n, w in enumerate(words) if not _TYPO_EXEMPT.search(w) and len(w) >= 4]
    changed = False
    for n in eligible:
        if rng.random() < rate:
            words[n] = _garble(words[n], rng)
            changed = changed or words[n] != text.split(" ")[n]
    for n in sorted(eligible, key=lambda k: -len(words[k])):
        if changed:
            break
        words[n] = _garble(words[n], rng)
        changed = words[n] != text.split(" ")[n]
    # Placeholder names are lower case already, so this cannot touch the values filled in later.
    return " ".join(words).lower()
