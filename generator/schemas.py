"""Pydantic contracts of the generator: org context in; fixtures, manifest and blueprints out."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

NoiseLevel = Literal["clean", "semi_noisy", "messy"]
FinalStatus = Literal["AWAITING_RESPONSE", "COMPLETE"]
FieldKind = Literal["name", "phone", "email", "date", "time", "text", "choice"]
WritingStyle = Literal["clean", "casual", "typo_heavy"]
# How a customer converses (see generator/personas.py): "direct" answers what is asked;
# "chatty" adds small talk, thanks and questions of their own, and answers two things at once;
# "hesitant" gives partial answers and changes their mind; "precise" (rare) writes dates as
# YYYY-MM-DD and times as HH:MM, the way a form would.
Manner = Literal["direct", "chatty", "hesitant", "precise"]

_SLUG = r"^[a-z0-9][a-z0-9_-]*$"
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- org context


class ServiceSpec(_Strict):
    name: str = Field(min_length=1)
    price: Decimal = Field(ge=0)
    duration: int = Field(gt=0, description="minutes")
    description: str = ""


class IntakeFieldSpec(_Strict):
    key: str = Field(pattern=_SLUG)
    label: str = Field(min_length=1)
    required: bool = True
    kind: FieldKind = "text"
    choices: list[str] = Field(default_factory=list)


class PolicySpec(_Strict):
    id: str = Field(pattern=_SLUG)
    text: str = Field(min_length=1)
    critical: bool = False


class SkillSpec(_Strict):
    name: str = Field(min_length=1)
    instructions: str = Field(min_length=1)


class HoursSpec(_Strict):
    """One opening-hours line, e.g. days="Mon-Fri", opens="09:00", closes="18:00"."""

    days: str = Field(min_length=1)
    opens: str
    closes: str

    @field_validator("opens", "closes")
    @classmethod
    def _hhmm(cls, value: str) -> str:
        if not _HHMM.match(value):
            raise ValueError("must be a 24-hour time HH:MM")
        return value


class ContactSpec(_Strict):
    phone: str = ""
    email: str = ""
    address: str = ""
    website: str = ""


class KbDocumentSpec(_Strict):
    slug: str = Field(pattern=_SLUG)
    title: str = Field(min_length=1)
    text: str = Field(min_length=1)


class OrgContext(_Strict):
    """Everything the lab knows about one organization; the single input of the generator."""

    slug: str = Field(pattern=_SLUG)
    name: str = Field(min_length=1)
    locale: str = "en_US"
    currency: str = "EUR"
    offering: str = Field(min_length=1)
    services: list[ServiceSpec] = Field(min_length=1)
    intake_fields: list[IntakeFieldSpec] = Field(min_length=1)
    policies: list[PolicySpec] = Field(default_factory=list)
    skills: list[SkillSpec] = Field(default_factory=list)
    hours: list[HoursSpec] = Field(default_factory=list)
    contact: ContactSpec = Field(default_factory=ContactSpec)
    responder: str | None = None
    kb: list[KbDocumentSpec] = Field(default_factory=list)


# --------------------------------------------------------------------------- fixtures


class FixtureDocument(_Strict):
    id: str
    title: str
    text: str


PlantedNoiseKind = Literal["typo", "markup"]


class PlantedNoise(_Strict):
    """One distinct piece of noise the generator planted: a misspelt word ("Colletc" for
    "Collect") or a debris mark ("•" for a "-" list marker, "|" joining the cells of a broken
    table row). `text` is the noisy form exactly as it appears in the fixture."""

    kind: PlantedNoiseKind
    text: str = Field(min_length=1)
    clean: str = Field(default="", description="the original form; '' when nothing was there")


class Fixture(_Strict):
    """A generated KB document set (>=200 lines in all) given to the responder for one case."""

    key: str
    noise_level: NoiseLevel
    documents: list[FixtureDocument]
    metrics: dict[str, float] = Field(default_factory=dict)
    # What the generator planted, one entry per distinct noisy form; empty for a clean fixture,
    # for fixtures stored before it was recorded, and for a KB judged from a file.
    noise: list[PlantedNoise] = Field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(f"# {d.title}\n{d.text}" for d in self.documents)

    @property
    def line_count(self) -> int:
        return len(self.text.splitlines())


# --------------------------------------------------------------------------- manifest


class ManifestService(_Strict):
    name: str
    price: Decimal
    duration_minutes: int
    source: str


class ManifestIntakeField(_Strict):
    key: str
    label: str
    required: bool
    kind: FieldKind
    source: str


class ManifestPolicyFact(_Strict):
    id: str
    text: str
    critical: bool
    source: str


class ManifestHours(_Strict):
    days: str
    opens: str
    closes: str
    source: str


class ManifestContact(_Strict):
    kind: Literal["phone", "email", "address", "website"]
    value: str
    source: str


class DisallowedClaim(_Strict):
    id: str
    kind: Literal["invented_discount", "unoffered_service", "wrong_hours", "guarantee", "other"]
    text: str
    source: str


class ManifestInstruction(_Strict):
    """A directive meant for the responder (an org skill): never to be read out to customers."""

    name: str
    text: str
    source: str


class ManifestDraft(_Strict):
    """What a model writes when it builds the manifest (everything but the copied instructions).
    Its JSON schema keeps the title "Manifest" the model has always been asked for."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Manifest")

    org_slug: str
    org_name: str
    currency: str
    services: list[ManifestService]
    intake_fields: list[ManifestIntakeField]
    policies: list[ManifestPolicyFact]
    hours: list[ManifestHours]
    contacts: list[ManifestContact]
    disallowed_claims: list[DisallowedClaim]


class Manifest(ManifestDraft):
    """Ground truth the judge measures against; every entry names where it came from."""

    # Copied from the org's skills by code, never written by a model (see generate_manifest).
    instructions: list[ManifestInstruction] = Field(default_factory=list)


# --------------------------------------------------------------------------- scenarios


class Persona(_Strict):
    name: str
    locale: str
    style: WritingStyle
    facts: dict[str, str] = Field(description="intake field key -> value the customer holds")
    manner: Manner = "direct"


class ReplyStep(_Strict):
    reply: str
    expected_status: FinalStatus


class Blueprint(_Strict):
    key: str
    scenario_type: str
    title: str
    goal: str
    fixture_key: str
    persona: Persona
    planned_messages: list[str] = Field(min_length=1)
    expected_status: FinalStatus
    reply_flow: list[ReplyStep] = Field(default_factory=list)
    max_turns: int = Field(ge=1)
    # The day the conversation takes place (the run's creation date): the customer's relative
    # dates ("next Tuesday", "tomorrow") mean a day relative to it, for the simulator and the
    # judge alike (generator/dates.py). None for blueprints stored before it existed.
    reference_date: date | None = None


class Artifacts(_Strict):
    """What the generate stage produces for one run."""

    fixtures: list[Fixture]
    manifest: Manifest
    blueprints: list[Blueprint]
