"""The responder contract of DESIGN §7: one request and one reply per turn."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class KbEntry(BaseModel):
    id: str
    title: str
    text: str


class IntakeFieldRef(BaseModel):
    key: str
    label: str
    required: bool


class ChatMessage(BaseModel):
    role: Literal["customer", "assistant"]
    content: str


class ResponderRequest(BaseModel):
    session_id: str
    organization: str
    locale: str
    kb: list[KbEntry]
    intake_fields: list[IntakeFieldRef]
    messages: list[ChatMessage] = Field(min_length=1)


class ResponderUsage(BaseModel):
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)


class ResponderReply(BaseModel):
    """Validated at the edge: an adapter's raw reply that does not fit is an error, not a turn."""

    model_config = ConfigDict(extra="ignore")

    reply: str
    extracted: dict[str, str] = Field(default_factory=dict)
    status: Literal["AWAITING_RESPONSE", "COMPLETE"] | None = None
    usage: ResponderUsage | None = None
