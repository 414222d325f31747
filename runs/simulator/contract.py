"""The responder contract of DESIGN §7: one request and one reply per turn."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


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

    @model_validator(mode="after")
    def _storable(self) -> ResponderReply:
        """A NUL character cannot be stored in Postgres text: shown as U+FFFD instead, so a
        bot that sends one gets its turn judged rather than its case lost to a database error."""
        self.reply = self.reply.replace("\x00", "\ufffd")
        self.extracted = {
            k.replace("\x00", "\ufffd"): v.replace("\x00", "\ufffd")
            for k, v in self.extracted.items()
        }
        return self
