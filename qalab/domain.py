"""The lab's shared domain types, in the lowest layer: every layer above imports them from here.

Pure pydantic and typing: no Django, no Celery. What lives here is what more than one layer
speaks of: the organization's context (the generator's input, the org import's output),
severities, fix targets, effort sizes and the kinds of artifact a run stores.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from qalab.json_mapping import PathSyntaxError, as_text, json_problem, parse_path, template_problem
from qalab.redact import redact
from qalab.values import PriceKind
from qalab.values.org_fields import (
    check_service,
    read_hours_field,
    read_hours_line,
    read_org,
    read_service,
)

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
    CASE_CHECKS = "case_checks"  # a case's deterministic findings, made when its talk ended


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
# Forms a price and a duration may be written in (docs/org-folder.md lists them).
PRICE_EXAMPLES = [
    "80", "52.00", "£52", "52 GBP", "EUR 45", "45,50 €", "€1,234.50", "1.234,50 €", "CHF 120.-",
    "$9.99", "¥3000", "from €80", "ab 80 €", "à partir de 35 €", "starting at $89", "€80+",
    "80–120 €", "£40 - £60", "free", "gratis", "0",
]  # fmt: skip
DURATION_EXAMPLES = [
    "45", "45 min", "45 minutes", "90 Minuten", "1h 30", "1h30", "1 hr 30 mins", "1.5 hours",
    "2 heures", "about an hour", "an hour and a half", "half an hour", "20-30 min", "2 visits",
    "varies",
]  # fmt: skip


class Strict(BaseModel):
    """A frozen model that refuses unknown fields: the base of every contract."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class OrgSpec(Strict):
    """A part of an org folder: a field's docstring is its description in docs/org-folder.md."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ServiceSpec(OrgSpec):
    """One service the organization offers. `price` and `duration` take a number or the org's own
    words; the import reads them (`qalab.values`) into the canonical fields and keeps the words
    in `price_text` / `duration_text`, so fixtures say them the way the org does."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    """The service's name, as customers know it."""
    price: Decimal = Field(
        ge=0,
        le=PRICE_MAX,
        decimal_places=PRICE_DECIMALS,
        json_schema_extra={"examples": PRICE_EXAMPLES, "accepts": "number or text"},
    )
    """A number in the organization's currency, or text: an amount with any currency symbol or
    ISO code before or after it, a "from" price, a range, or "free". Read as the price, the
    lowest price of a range, or the "from" price."""
    price_kind: PriceKind = Field(default="exact", json_schema_extra={"derived": True})
    """Set from `price`: exact, from (a lowest price: "from €80", "€80+") or range."""
    price_max: Decimal | None = Field(
        default=None,
        ge=0,
        le=PRICE_MAX,
        decimal_places=PRICE_DECIMALS,
        json_schema_extra={"derived": True},
    )
    """Set from `price`: the top of a range ("80-120 €" -> 120)."""
    price_text: str = Field(default="", max_length=NAME_MAX, json_schema_extra={"derived": True})
    """Set from `price` when it is text: the organization's words, as fixtures say them."""
    duration: int | None = Field(
        gt=0,
        le=DURATION_MAX,
        json_schema_extra={"examples": DURATION_EXAMPLES, "accepts": "minutes or text"},
    )
    """Minutes as a number, or text: a span ("45 min", "1h 30", "about an hour"), a range
    ("20-30 min", read as its shortest), or words that are no span ("2 visits", "varies"), kept
    as they are, without minutes."""
    duration_max: int | None = Field(
        default=None, gt=0, le=DURATION_MAX, json_schema_extra={"derived": True}
    )
    """Set from `duration`: the longest of a range, in minutes."""
    duration_text: str = Field(default="", max_length=NAME_MAX, json_schema_extra={"derived": True})
    """Set from `duration` when it is text: the organization's words."""
    description: str = ""
    """What the service is, in a sentence or two."""

    @model_validator(mode="wrap")
    @classmethod
    def _read(cls, data: Any, handler: ModelWrapValidatorHandler[ServiceSpec]) -> ServiceSpec:
        return read_service(data, handler)

    @model_validator(mode="after")
    def _ranges(self) -> ServiceSpec:
        check_service(self.price, self.price_kind, self.price_max, self.duration, self.duration_max)
        return self


Example = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class IntakeFieldSpec(OrgSpec):
    """One detail the bot must collect before a booking."""

    key: str = Field(pattern=SLUG_PATTERN, max_length=SLUG_MAX)
    """A stable id, lower case: `phone`, `preferred_date`."""
    label: str = Field(min_length=1, max_length=NAME_MAX)
    """How the bot asks for it: "Mobile number"."""
    required: bool = True
    """Whether a booking needs it."""
    kind: FieldKind = "text"
    """What the value is; the judge checks extracted values by kind."""
    choices: list[str] = Field(default_factory=list)
    """For `kind: choice`, the allowed answers (optional)."""
    examples: list[Example] = Field(default_factory=list, max_length=20)
    """For `kind: text`, values a customer may give, each one line; simulated customers say one.
    Without them a value of the kind the label asks for ("Frame number": an identifier)."""

    @model_validator(mode="after")
    def _examples(self) -> IntakeFieldSpec:
        if self.examples and self.kind != "text":
            raise ValueError(f"examples are for text fields, not kind {self.kind}")
        if any("\n" in e or "\r" in e for e in self.examples):
            raise ValueError("an example is one line of text")
        return self


class PolicySpec(OrgSpec):
    """One rule of the business the bot must state correctly."""

    id: str = Field(pattern=SLUG_PATTERN, max_length=SLUG_MAX)
    """A stable id, lower case: `cancellation`."""
    text: str = Field(min_length=1)
    """The rule in the organization's words."""
    critical: bool = False
    """Every value in a critical policy (amounts, times, numbers) must survive in each fixture."""


class SkillSpec(OrgSpec):
    """An instruction for the bot; the judge flags a reply that reads it out to a customer."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    """A short name: `booking`."""
    instructions: str = Field(min_length=1)
    """What the bot must do."""


class HoursSpec(OrgSpec):
    """One opening-hours line, e.g. days="Mon-Fri", opens="9am", closes="5:30pm" (stored 17:30)."""

    days: str = Field(min_length=1)
    """The days it covers: "Mon-Fri", "Sat", "Tue-Thu"."""
    opens: str
    """Opening time: "08:30", "8:30am", "9", "noon"."""
    closes: str
    """Closing time: "18:00", "6pm", "5" (after a morning opening: 17:00), "midnight"."""

    @model_validator(mode="wrap")
    @classmethod
    def _read_times(cls, data: Any, handler: ModelWrapValidatorHandler[HoursSpec]) -> HoursSpec:
        return read_hours_line(data, handler)


class ContactSpec(OrgSpec):
    """How customers reach the business; each one given must survive in every fixture."""

    phone: str = ""
    """Phone number, in any usual format."""
    email: str = ""
    """Email address."""
    address: str = ""
    """Postal address."""
    website: str = ""
    """Website address."""


class KbDocumentSpec(OrgSpec):
    """One knowledge-base document: a `kb/*.md` file, read by the import (never in org.yaml)."""

    slug: str = Field(pattern=SLUG_PATTERN, max_length=KB_SLUG_MAX)
    """The file name without `.md`, lower-cased."""
    title: str = Field(min_length=1, max_length=KB_TITLE_MAX)
    """The first line when it is a `#` heading, else the file name."""
    text: str = Field(min_length=1)
    """The whole file (UTF-8, not empty)."""


# --------------------------------------------------------------------------- responder mapping

ReplyStatus = Literal["AWAITING_RESPONSE", "COMPLETE"]
# What an `http(s)://` bot of its own JSON shape can be sent (docs/responders.md).
REQUEST_SCALARS = frozenset({"message", "session_id", "organization", "locale", "kb_text"})
REQUEST_LISTS = frozenset({"history", "history_before", "kb", "intake_fields", "intake_keys"})
QUERY_SCALARS = frozenset({"message", "session_id", "organization", "locale"})
HEADER_SCALARS = frozenset({"session_id", "organization", "locale"})
ITEM_SCALARS = frozenset({"role", "content"})
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
_LAB_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_SECRET_NAME = re.compile(
    r"(?i)auth|token|secret|passw|cookie|credential|signature|api[-_]?key|(^|[-_])key$"
)
_JWT = re.compile(r"\beyJ[\w-]{6,}\.[\w-]{6,}\.")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_NO_SECRETS = (
    "never put a secret in the org folder: name the header in QALAB_RESPONDER_AUTH_HEADER "
    "and put its value in the environment variable named by QALAB_RESPONDER_AUTH_ENV"
)


def _looks_secret(value: str) -> bool:
    """A bearer/basic token, an `sk-` key, `api_key=...`, a JWT or a long opaque token."""
    if redact(value, secrets=[]) != value or _JWT.search(value):
        return True
    for word in value.split():
        if "{{" in word or "://" in word or _UUID.match(word) or len(word) < 32:
            continue
        if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
            return True
    return False


def _check_pairs(pairs: dict[str, str], *, what: str, scalars: frozenset[str]) -> None:
    for name, value in pairs.items():
        if what == "header" and not _HEADER_NAME.match(name):
            raise ValueError(f"header name {name!r} is not a valid HTTP header name")
        if what == "header" and name.lower() in _LAB_HEADERS:
            raise ValueError(f"header {name!r} is set by the lab, not by the mapping")
        if any(c in value for c in "\r\n\x00"):
            raise ValueError(f"{what} {name!r}: a line break or NUL in the value")
        if _SECRET_NAME.search(name) or _looks_secret(value):
            raise ValueError(f"{what} {name!r} looks like a credential; {_NO_SECRETS}")
        if problem := template_problem(value, scalars=scalars, lists=frozenset(), where=name):
            raise ValueError(problem)


def _check_path(path: str) -> str:
    try:
        parse_path(path)
    except PathSyntaxError as exc:
        raise ValueError(f"path {path!r}: {exc}") from None
    return path


def _json_template(value: Any, *, scalars: frozenset[str], lists: frozenset[str]) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"template is not JSON: {exc}") from None
    if not isinstance(value, (dict, list)):
        raise ValueError(f"template must be a JSON object or list, got {type(value).__name__}")
    if problem := json_problem(value):
        raise ValueError(f"template is not JSON: {problem}")
    if problem := template_problem(value, scalars=scalars, lists=lists):
        raise ValueError(problem)
    return value


class HistoryRoles(Strict):
    """The bot's names for the lab's two roles (OpenAI style by default)."""

    customer: str = Field(default="user", min_length=1, max_length=NAME_MAX)
    assistant: str = Field(default="assistant", min_length=1, max_length=NAME_MAX)


class HistoryShape(Strict):
    """How one message of `{{history}}` looks to the bot: `item` with `{{role}}`, `{{content}}`."""

    roles: HistoryRoles = Field(default_factory=HistoryRoles)
    item: Any = Field(default_factory=lambda: {"role": "{{role}}", "content": "{{content}}"})

    @field_validator("item")
    @classmethod
    def _item(cls, value: Any) -> Any:
        return _json_template(value, scalars=ITEM_SCALARS, lists=frozenset())


class UsagePaths(Strict):
    prompt_tokens: str | None = None
    completion_tokens: str | None = None

    @field_validator("prompt_tokens", "completion_tokens")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return None if value is None else _check_path(value)


class ResponsePaths(Strict):
    """Where the reply, status, extracted fields and usage are in the bot's JSON."""

    reply: str = Field(description="path to the reply text (a list of texts is joined)")
    status: str | None = None
    status_map: dict[str, ReplyStatus | None] = Field(default_factory=dict)
    extracted: str | dict[str, str] | None = None
    usage: UsagePaths | None = None

    @field_validator("reply", "status")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return None if value is None else _check_path(value)

    @field_validator("extracted")
    @classmethod
    def _extracted(cls, value: str | dict[str, str] | None) -> str | dict[str, str] | None:
        if isinstance(value, dict):
            for path in value.values():
                _check_path(path)
        elif value is not None:
            _check_path(value)
        return value

    @field_validator("status_map", mode="before")
    @classmethod
    def _map_keys(cls, value: Any) -> Any:
        """YAML reads `true:`, `1:` and `null:` keys as other types; the bot's JSON may too."""
        return {as_text(k): v for k, v in value.items()} if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _map_needs_status(self) -> ResponsePaths:
        if self.status_map and self.status is None:
            raise ValueError("status_map needs status: the path to the bot's status")
        return self


class ResponderHttp(Strict):
    """How to talk to an `http(s)://` bot of its own JSON shape: the request it takes (a
    template) and where its answer lies (paths). No secret: the auth header comes from the
    environment (QALAB_RESPONDER_AUTH_ENV)."""

    method: Literal["POST", "PUT", "PATCH", "GET"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    query: dict[str, str] = Field(default_factory=dict)
    request: Any = None
    history: HistoryShape = Field(default_factory=HistoryShape)
    response: ResponsePaths

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        _check_pairs(value, what="header", scalars=HEADER_SCALARS)
        return value

    @field_validator("query")
    @classmethod
    def _query(cls, value: dict[str, str]) -> dict[str, str]:
        _check_pairs(value, what="query parameter", scalars=QUERY_SCALARS)
        return value

    @field_validator("request")
    @classmethod
    def _request(cls, value: Any) -> Any:
        if value is None:
            return None
        return _json_template(value, scalars=REQUEST_SCALARS, lists=REQUEST_LISTS)

    @model_validator(mode="after")
    def _body_fits_method(self) -> ResponderHttp:
        if self.method == "GET" and self.request is not None:
            raise ValueError("a GET sends no body: drop request, or use POST")
        if self.method != "GET" and self.request is None:
            raise ValueError(f"request (the body template) is required for {self.method}")
        return self


class OrgContext(OrgSpec):
    """Everything the lab knows about one organization; the single input of the generator."""

    slug: str = Field(pattern=SLUG_PATTERN, max_length=SLUG_MAX)
    """The organization's id in the lab, lower case: `harbour-lane`."""
    name: str = Field(min_length=1, max_length=NAME_MAX)
    """The business's name."""
    locale: str = Field(default="en_US", max_length=LOCALE_MAX)
    """Language and country, e.g. `en_GB`, `de_DE`; tells "$" and "kr" prices apart."""
    currency: str = Field(default="EUR", max_length=CURRENCY_MAX)
    """An ISO code (`EUR`, `GBP`), or a symbol or word naming one (`£`, `euro`). When absent,
    the currency the prices name ("£52" -> GBP), else EUR. A price in another currency is an
    error."""
    offering: str = Field(min_length=1)
    """What the business does, in a few sentences."""
    services: list[ServiceSpec] = Field(min_length=1)
    """What customers can book, at least one."""
    intake_fields: list[IntakeFieldSpec] = Field(min_length=1)
    """What the bot must collect for a booking, at least one."""
    policies: list[PolicySpec] = Field(default_factory=list)
    """The business's rules."""
    skills: list[SkillSpec] = Field(default_factory=list)
    """Instructions for the bot."""
    hours: list[HoursSpec] = Field(default_factory=list)
    """Opening hours: text as the business writes them, `{days: times}`, or a list of lines."""
    contact: ContactSpec = Field(default_factory=ContactSpec)
    """Contact details."""
    responder: str | None = Field(default=None, max_length=RESPONDER_MAX)
    responder_http: ResponderHttp | None = None
    kb: list[KbDocumentSpec] = Field(default_factory=list)
    """Read from `kb/*.md`; a `kb` field in org.yaml is an error."""

    @field_validator("hours", mode="wrap")
    @classmethod
    def _read_hours(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> list[HoursSpec]:
        return read_hours_field(value, handler)

    @field_validator("intake_fields", "policies", "kb")
    @classmethod
    def _unique_keys(cls, items: list[Any], info: ValidationInfo) -> list[Any]:
        """Keys the tables hold once per organization, compared without case."""
        attr = {"intake_fields": "key", "policies": "id", "kb": "slug"}[str(info.field_name)]
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            key = str(getattr(item, attr))
            first = seen.setdefault(key.casefold(), i)
            if first != i:
                raise ValueError(f"{key!r} is given twice (items {first} and {i}); keep one")
        return items

    @model_validator(mode="after")
    def _mapping_needs_a_url(self) -> OrgContext:
        if self.responder_http is None:
            return self
        parsed = urlsplit(self.responder or "")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(
                "responder_http maps the JSON of an http(s):// bot: set responder to its URL "
                f"(responder is {self.responder!r})"
            )
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _currency(cls, data: Any, handler: ModelWrapValidatorHandler[OrgContext]) -> OrgContext:
        return read_org(data, handler, default_currency=cls.model_fields["currency"].default)
