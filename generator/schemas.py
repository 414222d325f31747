"""Pydantic contracts of the generator: org context in; fixtures, manifest and blueprints out."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from qalab.domain import FieldKind, Strict
from qalab.values import PriceKind

NoiseLevel = Literal["clean", "semi_noisy", "messy"]
FinalStatus = Literal["AWAITING_RESPONSE", "COMPLETE"]
WritingStyle = Literal["clean", "casual", "typo_heavy"]
# How a customer converses (see generator/personas.py): "direct" answers what is asked;
# "chatty" adds small talk, thanks and questions of their own, and answers two things at once;
# "hesitant" gives partial answers and changes their mind; "precise" (rare) writes dates as
# YYYY-MM-DD and times as HH:MM, the way a form would.
Manner = Literal["direct", "chatty", "hesitant", "precise"]

# --------------------------------------------------------------------------- fixtures


class FixtureDocument(Strict):
    id: str
    title: str
    text: str


PlantedNoiseKind = Literal["typo", "markup"]


class PlantedNoise(Strict):
    """One distinct piece of noise the generator planted: a misspelt word ("Colletc" for
    "Collect") or a debris mark ("•" for a "-" list marker, "|" joining the cells of a broken
    table row). `text` is the noisy form exactly as it appears in the fixture."""

    kind: PlantedNoiseKind
    text: str = Field(min_length=1)
    clean: str = Field(default="", description="the original form; '' when nothing was there")


class Fixture(Strict):
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


class ManifestService(Strict):
    """A service's canonical facts. `price` is the price, or the lowest of a range or a "from"
    price (`price_kind`); `duration_minutes` is None when the org describes the duration in
    words that are no span of time ("2 visits"). The texts are the org's own words."""

    name: str
    price: Decimal
    duration_minutes: int | None
    source: str
    price_kind: PriceKind = "exact"
    price_max: Decimal | None = None
    price_text: str = ""
    duration_max_minutes: int | None = None
    duration_text: str = ""

    @model_serializer(mode="wrap")
    def _lean(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The later fields are written only when set: an org of plain numbers keeps the
        # manifest (and its hash) it always had.
        data = handler(self)
        for key, default in _LATER_DEFAULTS.items():
            if key in data and data[key] == default:
                del data[key]
        return data


_LATER_DEFAULTS: dict[str, Any] = {
    "price_kind": "exact",
    "price_max": None,
    "price_text": "",
    "duration_max_minutes": None,
    "duration_text": "",
}


class ManifestIntakeField(Strict):
    key: str
    label: str
    required: bool
    kind: FieldKind
    source: str


class ManifestPolicyFact(Strict):
    id: str
    text: str
    critical: bool
    source: str


class ManifestHours(Strict):
    days: str
    opens: str
    closes: str
    source: str


class ManifestContact(Strict):
    kind: Literal["phone", "email", "address", "website"]
    value: str
    source: str


class DisallowedClaim(Strict):
    id: str
    kind: Literal["invented_discount", "unoffered_service", "wrong_hours", "guarantee", "other"]
    text: str
    source: str


class ManifestInstruction(Strict):
    """A directive meant for the responder (an org skill): never to be read out to customers."""

    name: str
    text: str
    source: str


class ManifestDraft(Strict):
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


class Persona(Strict):
    name: str
    locale: str
    style: WritingStyle
    facts: dict[str, str] = Field(description="intake field key -> value the customer holds")
    manner: Manner = "direct"


class ReplyStep(Strict):
    reply: str
    expected_status: FinalStatus


class Blueprint(Strict):
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
    # judge alike (generator/dates/). None for blueprints stored before it existed.
    reference_date: date | None = None


class Artifacts(Strict):
    """What the generate stage produces for one run."""

    fixtures: list[Fixture]
    manifest: Manifest
    blueprints: list[Blueprint]
