"""A small hand-written dental KB, its intake fields and request builders for simulator tests."""

from __future__ import annotations

from runs.simulator.contract import ChatMessage, IntakeFieldRef, KbEntry, ResponderRequest

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
