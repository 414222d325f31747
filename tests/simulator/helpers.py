"""A small hand-written dental KB, its intake fields and request builders for simulator tests."""

from __future__ import annotations

from generator.schemas import Blueprint
from judge.schemas import Turn
from qalab.llm import Engine
from runs.simulator.adapters import Responder
from runs.simulator.contract import ChatMessage, IntakeFieldRef, KbEntry, ResponderRequest
from runs.simulator.customer import customer_next_message

PRICES = """## Price list

Hygiene clean | 80 EUR | 45 min
Check-up and exam | 60 EUR | 30 min
Tooth-coloured filling | 120 EUR | 45 min
"""

HOURS = """## Opening hours

Mon-Thu: 08:30 to 18:00
Fri: 08:30 to 16:00
Closed on Sunday.
"""

POLICIES = """## Cancellation

Appointments cancelled with less than 24 hours notice are charged a 25 EUR fee.
"""

KB = [
    KbEntry(id="prices", title="Price list", text=PRICES),
    KbEntry(id="hours", title="Opening hours", text=HOURS),
    KbEntry(id="policies", title="Cancellation policy", text=POLICIES),
]
KB_TEXT = "\n".join(e.text for e in KB)
SERVICES = ["Check-up and exam", "Hygiene clean", "Tooth-coloured filling"]

FIELDS = [
    IntakeFieldRef(key="full_name", label="Full name", required=True),
    IntakeFieldRef(key="phone", label="Phone number", required=True),
    IntakeFieldRef(key="email", label="Email address", required=False),
    IntakeFieldRef(key="service", label="Service", required=True),
    IntakeFieldRef(key="preferred_date", label="Preferred date", required=True),
]
REQUIRED = [f.key for f in FIELDS if f.required]


def request(*contents: str, kb=None, fields=None) -> ResponderRequest:
    """A request whose messages alternate customer, assistant, customer, ..."""
    messages = [
        ChatMessage(role="customer" if n % 2 == 0 else "assistant", content=text)
        for n, text in enumerate(contents)
    ]
    return ResponderRequest(
        session_id="s-1",
        organization="Harbour Lane Dental",
        locale="en_IE",
        kb=KB if kb is None else kb,
        intake_fields=FIELDS if fields is None else fields,
        messages=messages,
    )


def play_offline(
    blueprint: Blueprint,
    *,
    organization: str,
    locale: str,
    kb: list[KbEntry],
    intake: list[IntakeFieldRef],
    engine: Engine,
    responder: Responder,
) -> list[Turn]:
    """One blueprint's conversation, the offline customer against `responder`, as the simulator
    plays it (the customer's next message until it has none; the whole history each turn)."""
    history: list[Turn] = []
    while message := customer_next_message(blueprint, history, engine=engine, purpose="c"):
        before = [
            m
            for t in history
            for m in (
                ChatMessage(role="customer", content=t.customer),
                ChatMessage(role="assistant", content=t.reply),
            )
        ]
        request = ResponderRequest(
            session_id=f"qalab-0-{blueprint.key}",
            organization=organization,
            locale=locale,
            kb=kb,
            intake_fields=intake,
            messages=[*before, ChatMessage(role="customer", content=message)],
        )
        reply = responder.respond(request, engine=engine, purpose="r")
        history.append(
            Turn(
                index=len(history),
                customer=message,
                reply=reply.reply,
                extracted=reply.extracted,
                status=reply.status,
            )
        )
    return history
