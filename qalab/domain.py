"""The lab's shared domain types, in the lowest layer: every layer above imports them from here.

Pure pydantic and typing: no Django, no Celery. What lives here is what more than one layer
speaks of: the organization's context (the generator's input, the org import's output),
severities, fix targets, effort sizes and the kinds of artifact a run stores.
"""

from __future__ import annotations

import re
from decimal import Decimal
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# --------------------------------------------------------------------------- findings

Severity = Literal["critical", "major", "minor"]
# Most severe first; the one ordering every report, page and gate uses.
SEVERITIES: tuple[Severity, ...] = ("critical", "major", "minor")
SEVERITY_ORDER: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}

FixTarget = Literal["kb", "skill", "prompt", "pipeline"]
FIX_TARGETS: tuple[FixTarget, ...] = ("kb", "skill", "prompt", "pipeline")

Effort = Literal["S", "M", "L"]


class ArtifactKind(StrEnum):
    """What a run stores as an artifact row (one JSON document per kind and key)."""

    FIXTURE = "fixture"
    MANIFEST = "manifest"
    BLUEPRINT = "blueprint"
    LLM_REVIEW = "llm_review"


# --------------------------------------------------------------------------- org context

FieldKind = Literal["name", "phone", "email", "date", "time", "text", "choice"]

SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
# What the organization tables can hold (qalab/models.py uses the same numbers), checked when a
# folder is read, so a value too long is an error naming the field, not a database traceback.
SLUG_MAX = 50
NAME_MAX = 200
LOCALE_MAX = 20
CURRENCY_MAX = 8
RESPONDER_MAX = 500
KB_SLUG_MAX = 200
KB_TITLE_MAX = 300
PRICE_MAX_DIGITS, PRICE_DECIMALS = 10, 2
PRICE_MAX = Decimal("99999999.99")
DURATION_MAX = 100_000  # minutes (about ten weeks): no service of a booking lasts longer
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class Strict(BaseModel):
    """A frozen model that refuses unknown fields: the base of every contract."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ServiceSpec(Strict):
    name: str = Field(min_length=1, max_length=NAME_MAX)
    price: Decimal = Field(ge=0, le=PRICE_MAX, decimal_places=PRICE_DECIMALS)
    duration: int = Field(gt=0, le=DURATION_MAX, description="minutes")
    description: str = ""


class IntakeFieldSpec(Strict):
    key: str = Field(pattern=SLUG_PATTERN, max_length=SLUG_MAX)
    label: str = Field(min_length=1, max_length=NAME_MAX)
    required: bool = True
    kind: FieldKind = "text"
    choices: list[str] = Field(default_factory=list)


class PolicySpec(Strict):
    id: str = Field(pattern=SLUG_PATTERN, max_length=SLUG_MAX)
    text: str = Field(min_length=1)
    critical: bool = False


class SkillSpec(Strict):
    name: str = Field(min_length=1, max_length=NAME_MAX)
    instructions: str = Field(min_length=1)


class HoursSpec(Strict):
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


class ContactSpec(Strict):
    phone: str = ""
    email: str = ""
    address: str = ""
    website: str = ""


class KbDocumentSpec(Strict):
    slug: str = Field(pattern=SLUG_PATTERN, max_length=KB_SLUG_MAX)
    title: str = Field(min_length=1, max_length=KB_TITLE_MAX)
    text: str = Field(min_length=1)


class OrgContext(Strict):
    """Everything the lab knows about one organization; the single input of the generator."""

    slug: str = Field(pattern=SLUG_PATTERN, max_length=SLUG_MAX)
    name: str = Field(min_length=1, max_length=NAME_MAX)
    locale: str = Field(default="en_US", max_length=LOCALE_MAX)
    currency: str = Field(default="EUR", max_length=CURRENCY_MAX)
    offering: str = Field(min_length=1)
    services: list[ServiceSpec] = Field(min_length=1)
    intake_fields: list[IntakeFieldSpec] = Field(min_length=1)
    policies: list[PolicySpec] = Field(default_factory=list)
    skills: list[SkillSpec] = Field(default_factory=list)
    hours: list[HoursSpec] = Field(default_factory=list)
    contact: ContactSpec = Field(default_factory=ContactSpec)
    responder: str | None = Field(default=None, max_length=RESPONDER_MAX)
    kb: list[KbDocumentSpec] = Field(default_factory=list)
