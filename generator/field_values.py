"""Values a simulated customer gives for an org's free-text intake fields.

The org's example values when the field has some; else a value of the kind the label asks for,
read off its head noun ("Frame number" wants a number, "Bike make and type" a make and a type,
"Date of birth" a date, "Pet's name" a name, and whose): a small lexicon of label words names
the value maker, the other words of the label qualify it ("Registration number" is a plate,
"Number of people" a count), and what the org offers fills in the rest (the makes of bikes for
a bike shop, the animals a vet treats, the service being booked). A value never repeats the
label, holds no full stop and no line break (the customer ends a `Label: value` with one).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property

from faker import Faker

from generator.domain import DOMAINS, Domain, detect_domain, org_text
from qalab.domain import IntakeFieldSpec, OrgContext, ServiceSpec

# Words that join the asks of one label ("name and species", "year / make / model"), per language.
_AND = {"en": "and", "de": "und", "fr": "et", "sv": "och", "pl": "i", "es": "y", "it": "e"}
_OF = frozenset({"of", "von", "de", "du", "des", "av", "för"})
_YES_NO = {"de": ("Ja", "Nein"), "fr": ("Oui", "Non"), "sv": ("Ja", "Nej"), "pl": ("Tak", "Nie")}
_FAMILY_JOIN = frozenset({"thing", "person"})  # parts said as one phrase: "2017 Honda Civic"

ANIMALS = ("dog", "cat", "rabbit", "guinea pig", "hamster", "ferret", "horse", "budgie", "tortoise")
PET_NAMES = ("Bella", "Max", "Luna", "Milo", "Daisy", "Charlie", "Poppy", "Oscar", "Nala", "Teddy")
BREEDS = {
    "dog": ("Labrador", "Jack Russell terrier", "cocker spaniel", "border collie", "beagle"),
    "cat": ("British shorthair", "Maine Coon", "Siamese", "domestic shorthair"),
    "rabbit": ("Netherland dwarf", "mini lop", "Lionhead"),
}
COLOURS = ("black", "white", "silver", "dark blue", "red", "matt green", "grey")
SIZES = ("small", "medium", "large")
REFERRALS = ("a friend recommended you", "Google", "Instagram", "walked past the shop")
_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"

# The kinds of value a label may ask for, each with the label words that ask for it. A head
# noun names the kind; so may any word of a label without a known head ("What is wrong with it").
KIND_WORDS: dict[str, str] = {
    "problem": "problem problems issue issues wrong fault faults symptom symptoms reason "
    "describe description complaint damage details detail notes note concern concerns",
    "name": "name names nom namn imię imie nazwisko vorname nachname surname",
    "animal": "species animal animals pet pets breed tierart",
    "make": "make makes brand manufacturer marque marke hersteller",
    "model": "model models modell modèle",
    "type": "type types kind sort style category typ art",
    "year": "year jahr baujahr année",
    "id": "number no nr num id code reference ref serial nummer numer numéro",
    "plate": "registration reg plate licence license kennzeichen",
    "phone": "phone telephone mobile cell tel telefon telefonu téléphone handy",
    "email": "email e-mail mail",
    "date": "date datum birthday dob born geburtsdatum",
    "age": "age alter âge ålder wiek",
    "colour": "colour color farbe couleur färg",
    "size": "size größe taille storlek",
    "address": "address adresse street straße adres",
    "postcode": "postcode zip postal plz postleitzahl eircode",
    "city": "city town ort ville stadt",
    "company": "company business employer firm",
    "staff": "stylist therapist practitioner doctor vet mechanic barber trainer staff",
    "count": "people persons personnes personen guests participants pax many anzahl nombre "
    "antal liczba",
    "referral": "hear heard referral referred",
}
LEXICON: dict[str, str] = {w: kind for kind, words in KIND_WORDS.items() for w in words.split()}
# Heads that say little alone: a more telling word beside them decides ("Phone number").
_VAGUE = frozenset({"id", "type"})
_QUALIFIERS = frozenset({"phone", "email", "plate", "postcode", "count"})
_SERVICE_WORDS = frozenset(
    {"appointment", "session", "treatment", "service", "visit", "lesson", "class", "job"}
)
_PAST = frozenset({"last", "previous", "purchase", "purchased", "bought", "since"})
_BIRTH = frozenset({"birth", "birthday", "born", "dob", "geburtsdatum", "geburt"})
_SERIAL = frozenset({"frame", "serial", "chassis", "vin", "engine"})


@dataclass(frozen=True)
class Part:
    """One ask of a label: its head noun and the words that qualify it."""

    head: str
    words: tuple[str, ...]  # every word of the ask, head included
    owner: str = ""  # "pet" in "Pet's name"
    of: tuple[str, ...] = ()  # "birth" in "date of birth"


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?(?:-[^\W\d_]+)?", text.casefold())


def parse_label(label: str, locale: str = "en") -> list[Part]:
    """The asks of a label: "Pet's name and species" -> name (owner pet), species (of a pet)."""
    text = re.sub(r"\(.*?\)", " ", label)
    joiners = {"and", _AND.get(locale[:2], "and")}
    pattern = r"\s*(?:[/&+,]|" + "|".join(rf"\b{w}\b" for w in joiners) + r")\s*"
    parts: list[Part] = []
    shared: tuple[str, ...] = ()
    for chunk in re.split(pattern, text.casefold()):
        words = _words(chunk)
        if not words:
            continue
        owner = next((w[:-2] for w in words if re.search(r"['’]s$", w)), "")
        words = [re.sub(r"['’]s$", "", w) for w in words]
        cut = next((i for i, w in enumerate(words) if w in _OF and 0 < i < len(words) - 1), None)
        of = tuple(words[cut + 1 :]) if cut is not None else ()
        head = words[cut - 1] if cut is not None else words[-1]
        if len(words) == 1 and parts:  # "Bike make and type": the type of the bike
            words, owner = [*shared, *words], owner or parts[-1].owner
        shared = tuple(words[:-1]) if cut is None else shared
        parts.append(Part(head=head, words=tuple(words), owner=owner, of=of))
    return parts


def kind_of(part: Part) -> str:
    """The kind of value an ask wants: its head noun's, unless a more telling word qualifies a
    vague head ("Phone number", "Type of appointment"); else that of another word of the ask
    ("What is wrong with it"); else a service, when it names one; else "" (none known)."""
    kind = LEXICON.get(part.head, "")
    others = [w for w in (*part.words, *part.of) if w != part.head]
    services = bool({*part.words, *part.of} & _SERVICE_WORDS)
    if kind in _VAGUE:
        telling = [LEXICON[w] for w in reversed(others) if LEXICON.get(w) in _QUALIFIERS]
        return telling[0] if telling else "service" if services and kind == "type" else kind
    if kind:
        return kind
    known = next((LEXICON[w] for w in reversed(others) if w in LEXICON), "")
    return known or ("service" if services else "")


@dataclass
class Ask:
    """What a value maker may draw on: the field, the org, the service booked, the customer."""

    field: IntakeFieldSpec
    org: OrgContext
    service: ServiceSpec
    fake: Faker
    rng: random.Random
    start: date
    person: Mapping[str, str]  # the persona's name, phone and email

    @cached_property
    def thing(self) -> tuple[str, str, str]:
        """(make, model, type) of what the customer brings: of the domain the label names
        ("Bike make"), else of the org's; a made-up make for a domain without any."""
        words = set(_words(self.field.label))
        named = [d for d in DOMAINS if words & {k.strip() for k in d.keywords}]
        domain: Domain = named[0] if named else detect_domain(self.org)
        if domain.things:
            return self.rng.choice(domain.things)
        make = re.split(r"[\s,-]", self.fake.last_name())[0]
        return make, f"{self.rng.choice(_LETTERS)}{self.rng.randint(100, 990)}", "standard model"

    def animal(self) -> str:
        """An animal the service booked names ("Dog neutering"), else one the org mentions."""
        for text in (f"{self.service.name} {self.service.description}", org_text(self.org)):
            known = [a for a in ANIMALS if re.search(rf"\b{a}s?\b", text.casefold())]
            if known:
                return self.rng.choice(known)
        return self.rng.choice(ANIMALS[:3])

    def code(self, letters: int, digits: int, tail: int = 0) -> str:
        """An identifier; never 7 digits in a row, which would read as a phone number."""
        head = "".join(self.rng.choice(_LETTERS) for _ in range(letters))
        body = "".join(str(self.rng.randint(0, 9)) for _ in range(digits))
        return head + body + "".join(self.rng.choice(_LETTERS) for _ in range(tail))

    def day(self, past: bool) -> str:
        when = self.start + timedelta(days=self.rng.randint(2, 30))
        if past:
            when = self.start - timedelta(days=self.rng.randint(60, 3 * 365))
        return f"{when.day} {when:%B %Y}"


def _animal_owned(part: Part) -> bool:
    return LEXICON.get(part.owner) == "animal" or any(
        LEXICON.get(w) == "animal" for w in part.words if w != part.head
    )


def _name(ask: Ask, part: Part) -> str:
    words = set(part.words)
    if _animal_owned(part):
        return ask.rng.choice(PET_NAMES)
    if LEXICON.get(part.owner) == "company" or words & {"company", "business", "firm"}:
        return ask.fake.company()
    full = ask.person.get("name") or ask.fake.name()
    first, _, last = full.partition(" ")
    if words & {"first", "given", "vorname", "imię", "imie"}:
        return first
    if words & {"last", "family", "surname", "nachname", "nazwisko"}:
        return last or full
    return full


def _animal(ask: Ask, part: Part) -> str:
    species = ask.animal()
    if part.head == "breed":
        return ask.rng.choice(BREEDS.get(species, ("mixed breed",)))
    if part.head in ("pet", "pets"):  # "Pet": which one, and what it is
        return f"{ask.rng.choice(PET_NAMES)}, {species}"
    return species


def _id(ask: Ask, part: Part) -> str:
    if set(part.words) & _SERIAL:
        return ask.code(3, 5, 1) + str(ask.rng.randint(10, 99))
    return f"{ask.code(2, 0)}-{ask.code(0, 5)}"


def _count(ask: Ask, part: Part) -> str:
    nouns = [w for w in (*part.of, *part.words) if LEXICON.get(w) == "count" and w != "many"]
    after_many = part.words[part.words.index("many") + 1 :] if "many" in part.words else ()
    noun = (nouns or list(after_many) or [""])[-1]
    return f"{ask.rng.randint(2, 4)} {noun}".strip()


def _date(ask: Ask, part: Part) -> str:
    words = {*part.words, *part.of}
    if words & _BIRTH:
        years = ask.rng.randint(1, 12) if _animal_owned(part) else ask.rng.randint(19, 78)
        born = ask.start.replace(day=1) - timedelta(days=365 * years + ask.rng.randint(0, 360))
        return f"{born.day} {born:%B %Y}"
    return ask.day(past=bool(words & _PAST))


def _age(ask: Ask, part: Part) -> str:
    years = ask.rng.randint(1, 14) if _animal_owned(part) else ask.rng.randint(19, 78)
    return f"{years} years"


def _problem(ask: Ask, part: Part) -> str:
    service = ask.service
    detail = service.description.split(".")[0].strip() if service.description else service.name
    return f"Needs {service.name.lower()}: {detail[:1].lower()}{detail[1:]}"


def _yes_no(ask: Ask) -> str:
    return ask.rng.choice(_YES_NO.get(ask.org.locale[:2], ("Yes", "No")))


def _detail(ask: Ask, part: Part) -> str:
    """No kind known: what the customer comes for, in the org's words."""
    service = ask.service
    detail = service.description.split(".")[0].strip() if service.description else ""
    return f"{service.name}: {detail[:1].lower()}{detail[1:]}" if detail else service.name


MAKERS: dict[str, Callable[[Ask, Part], str]] = {
    "problem": _problem,
    "name": _name,
    "animal": _animal,
    "make": lambda ask, part: ask.thing[0],
    "model": lambda ask, part: ask.thing[1],
    "type": lambda ask, part: ask.thing[2],
    "year": lambda ask, part: str(ask.start.year - ask.rng.randint(1, 12)),
    "id": _id,
    "plate": lambda ask, part: ask.fake.license_plate(),
    "phone": lambda ask, part: ask.person.get("phone") or ask.fake.phone_number(),
    "email": lambda ask, part: ask.person.get("email") or ask.fake.free_email(),
    "date": _date,
    "age": _age,
    "colour": lambda ask, part: ask.rng.choice(COLOURS),
    "size": lambda ask, part: ask.rng.choice(SIZES),
    "address": lambda ask, part: ask.fake.street_address(),
    "postcode": lambda ask, part: ask.fake.postcode(),
    "city": lambda ask, part: ask.fake.city(),
    "company": lambda ask, part: ask.fake.company(),
    "staff": lambda ask, part: ask.fake.first_name(),
    "count": _count,
    "referral": lambda ask, part: ask.rng.choice(REFERRALS),
    "service": lambda ask, part: ask.service.name,
}
_FAMILY = {"make": "thing", "model": "thing", "type": "thing", "year": "thing", "name": "person"}


def _clean(value: str) -> str:
    """One line, no full stop that would end the customer's `Label: value.` early."""
    value = re.sub(r"\s*[\r\n]+\s*", ", ", value)
    value = re.sub(r"\.(?=\s|$)", "", value)
    return " ".join(value.split()).strip(" ,")


def _repeats_label(value: str, label: str) -> bool:
    """Does the value say the label ("Frame number for brake service"), rather than merely
    share a word with it ("Full service" for a field "Service")?"""
    asked, said = _words(label), _words(value)
    phrase, text = " ".join(asked), " ".join(said)
    return bool(asked) and (said[: len(asked)] == asked or (len(asked) > 1 and phrase in text))


def make_text_value(ask: Ask) -> str:
    """The customer's value for a text field (see the module docstring)."""
    field = ask.field
    if field.examples:
        return _clean(ask.rng.choice(field.examples))
    parts = parse_label(field.label, ask.org.locale)
    kinds = [kind_of(p) for p in parts]
    said: list[tuple[str, str]] = []  # (words, family)
    if not any(kinds) and field.label.rstrip().endswith("?"):
        parts, said = [], [(_yes_no(ask), "")]
    for part, kind in zip(parts, kinds, strict=False):
        text = MAKERS.get(kind, _detail)(ask, part)
        family = "pet" if kind == "name" and _animal_owned(part) else _FAMILY.get(kind, kind)
        if text not in [t for t, _ in said]:
            said.append((text, family))
    # One thing or one person is said as one phrase ("Trek folding bike"), the rest as a list.
    value = ""
    for n, (text, family) in enumerate(said):
        same = n and family in _FAMILY_JOIN and said[n - 1][1] == family
        value = f"{value}{' ' if same else ', ' if n else ''}{text}"
    value = _clean(value) or _clean(_detail(ask, Part("", ())))
    if _repeats_label(value, field.label):
        value = _clean(_detail(ask, Part("", ())))
    if _repeats_label(value, field.label) or not value:
        value = _id(ask, Part("", ()))
    return value
