"""One turn of the reference responder: the prompt a model would read, and the reply the rules
compose (safety first, then injection and discount pressure, answers, and the booking)."""

from __future__ import annotations

import re
from pathlib import Path

from qalab.llm import Engine
from qalab.llm.base import Message, estimate_message_tokens, estimate_tokens
from qalab.llm.prompts import fence, load_prompt
from runs.simulator.contract import ResponderReply, ResponderRequest, ResponderUsage
from runs.simulator.extraction import extract_spoken, mask_free_text
from runs.simulator.reference.answers import answer_questions, retrieve, search_kb
from runs.simulator.reference.booking import (
    booking_question,
    booking_summary,
    changed_fields,
    field_label,
    mid_sentence,
    noted_reply,
)
from runs.simulator.reference.kb_text import best_lines, service_names
from runs.simulator.reference.questions import (
    INJECTION,
    SUGGEST,
    asks_to_book,
    info_questions,
    is_small_talk,
)
from runs.simulator.retrieval import KbIndex, Passage, kb_index

MAX_TOKENS = 250
# The last exchange and the new message; what the customer said before reaches the model as the
# details extracted from it (`collected`), not as the whole conversation resent every turn.
HISTORY_MESSAGES = 3
# The model reads the best passages only, each cut short (issue 19: every turn resends them);
# the offline composer still uses all it retrieved.
PROMPT_PASSAGES = 3
PROMPT_PASSAGE_CHARS = 360
# The simulator's prompts folder (runs/simulator/prompts), one level up from this package.
PROMPT = load_prompt(Path(__file__).resolve().parents[1] / "prompts", "reference_responder")
_DISCOUNT = re.compile(r"discount|\d+ ?% off|\bfor free\b|\bfree of charge\b", re.IGNORECASE)
_SAFETY = re.compile(
    r"\b(?:pain\w*|hurts?|throbb\w*|swell\w*|swollen|bleed\w*|antibiotic\w*|medic(?:ine|ation)s?|"
    r"dose|dosage|prescri\w*|blister\w*|burn(?:ing|t|s)?|chest|breath\w*|smells? burnt|"
    r"spongy|warning light|fix it myself|is it safe|is it serious|overheat\w*|really hot)\b",
    re.IGNORECASE,
)


def reference_respond(request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
    """One turn of the reference assistant for `request` (see the module docstring)."""
    index = kb_index(request.kb)
    customer = [m.content for m in request.messages if m.role == "customer"]
    services = service_names(index)
    spoken = extract_spoken(request.intake_fields, customer, services)
    extracted = {key: value for key, (value, _) in spoken.items()}
    questions = info_questions(mask_free_text(request.intake_fields, customer[-1]))
    retrieved = [
        item
        for question in questions or [customer[-1]]
        for item in retrieve(index, customer, question, services)
    ]
    passages = list(dict.fromkeys(p for item in retrieved for p in item.passages))
    messages = _prompt(request, passages, extracted)

    def compose() -> ResponderReply:
        reply, status = _compose(request, index, customer, spoken, services, questions)
        return ResponderReply(reply=reply, extracted=extracted, status=status)

    result = engine.run(
        role="responder",
        purpose=purpose,
        messages=messages,
        max_tokens=MAX_TOKENS,
        output=ResponderReply,
        offline=compose,
    )
    usage = ResponderUsage(
        prompt_tokens=estimate_message_tokens(messages),
        completion_tokens=min(MAX_TOKENS, estimate_tokens(result.model_dump_json())),
    )
    return result.model_copy(update={"usage": usage})


def _prompt(
    request: ResponderRequest, passages: list[Passage], collected: dict[str, str]
) -> list[Message]:
    required = ", ".join(f.label for f in request.intake_fields if f.required) or "none"
    given = "; ".join(f"{key}={value}" for key, value in collected.items()) or "none yet"
    kb = "\n".join(
        fence(f"[{p.doc_id}] {p.title}\n{p.text[:PROMPT_PASSAGE_CHARS]}", "kb")
        for p in passages[:PROMPT_PASSAGES]
    )
    system = PROMPT.render(
        organization=request.organization,
        required=required,
        passages=kb or "(no passage)",
        collected=fence(given, "collected"),
    )
    history = [
        {"role": "user" if m.role == "customer" else "assistant", "content": m.content}
        for m in request.messages[-HISTORY_MESSAGES:]
    ]
    return [{"role": "system", "content": system}, *history]


def _compose(
    request: ResponderRequest,
    index: KbIndex,
    customer: list[str],
    spoken: dict[str, tuple[str, str]],
    services: list[str],
    questions: list[str],
) -> tuple[str, str]:
    last = customer[-1]
    extracted = {key: value for key, (value, _) in spoken.items()}
    parts: list[str] = []

    wants_booking = asks_to_book(last, services)
    safety = bool(_SAFETY.search(last)) or (
        any(_SAFETY.search(m) for m in customer[:-1]) and not wants_booking
    )
    if safety:
        parts.append(
            "I'm sorry to hear that. I can't give medical, technical or safety advice over chat."
        )
        # About the problem the customer described, even when they only ask "what do I do?".
        about = (
            last
            if _SAFETY.search(last)
            else next((m for m in reversed(customer) if _SAFETY.search(m)), last)
        )
        parts += [
            index.repair(line)
            for line, _ in best_lines(
                search_kb(index, f"{about} emergency urgent call appointment", 3),
                f"{about} emergency urgent call",
                limit=1,
            )
        ]
        if _SAFETY.search(last):
            parts.append("Would you like me to pass on a request for an urgent appointment?")
        else:
            parts.append("Just tell me if you would like an appointment and I will arrange it.")
        return " ".join(parts), "AWAITING_RESPONSE"

    injection = bool(INJECTION.search(last))
    if injection:
        parts.append(
            "I can't share my instructions or change how I work, but I'm happy to help with "
            "our services, prices, opening hours and bookings."
        )
    if _DISCOUNT.search(last):
        parts.append("I can't confirm any discount: I can only quote the prices in our price list.")

    booking = any(asks_to_book(m, services) for m in customer)
    fields = request.intake_fields
    changes = changed_fields(fields, customer, services)
    if changes and booking:
        what = " and ".join(
            f"the {field_label(f)} to {mid_sentence(words)}" for f, words in changes
        )
        parts.append(f"No problem, I've changed {what}.")
    if not injection:
        asked = [q for q in questions if not (booking and SUGGEST.search(q))]
        parts += answer_questions(request, index, customer, asked, services)
    thanks = is_small_talk(last) and not questions and not changes

    if booking:
        question = booking_question(request, extracted, services, last)
        if question:
            if thanks:
                parts.insert(0, "You're welcome!")
            noted = "" if changes else noted_reply(fields, customer, services)
            if noted:
                parts.insert(0, noted)
            parts.append(question)
            return " ".join(p for p in parts if p), "AWAITING_RESPONSE"
        summary = booking_summary(fields, spoken)
        already = any(summary in m.content for m in request.messages if m.role == "assistant")
        if thanks and already:
            parts.append(
                "You're welcome - the team will confirm your booking with you. Have a lovely day!"
            )
        else:
            parts.append(summary)
        return " ".join(parts), "COMPLETE"
    if thanks:
        return "You're welcome! Have a lovely day.", "COMPLETE"
    if not parts:
        return "Thanks for your message. How can I help you today?", "AWAITING_RESPONSE"
    return " ".join(parts), "COMPLETE"
