"""A model for tests/llm_server.py that answers every task of a run validly, at realistic length.

Fixture notes of a few paragraphs, the manifest and blueprints the offline writers produce,
customer messages as planned, reference-bot replies that quote a passage and ask for the next
detail, judge reviews with a few findings quoting the transcript, confirmations and action
phrasing. The server bills prompt chars / 4 and completion chars / 4, so a run with this brain
costs what a run on a real model would, roughly; `token_table` reads the ledger by role and
stage.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import date
from typing import Any

from qalab.llm.prompts import untagged

NOTES = (
    "# Front desk notes\n\n"
    "Please greet every visitor by name and keep replies short and friendly. When someone asks "
    "about a service we do not list, say so plainly and offer the closest one we do.\n\n"
    "## Bookings\n\nAsk for the details the booking form needs one or two at a time. Read the "
    "booking back before confirming it, and tell the customer the team will confirm by phone.\n"
    "\n## Questions we hear a lot\n\n- Parking: there is street parking nearby.\n- Payment: we "
    "take cards and cash at the desk.\n- Changes: customers can move a booking by calling us.\n"
    "\n# What to expect\n\nEach visit starts with a short chat about what the customer needs. "
    "The team explains the treatment, how long it takes and what it costs before starting, and "
    "answers any questions. Customers who are nervous can ask for extra time.\n\n"
    "# Email from the front desk\n\nHi all, a reminder to check the diary before offering a "
    "slot, and to note the customer's phone number on every request. Thanks, Reception\n\n"
    "# Shift handover\n\nAll requests from the morning are confirmed. Two customers asked "
    "about parking; the answer is in the Q&A below.\n\n# Customer Q&A\n\n**Can I cancel?** "
    "Yes, please let us know as early as you can so we can offer the slot to someone else.\n\n"
    "**Can the assistant tell me what is wrong?** No. The team cannot give advice over chat; "
    "if something is urgent, call the practice and we will find you the earliest appointment.\n"
    "\n**How do I pay?** At the desk on the day, by card, cash or contactless.\n"
)
_FENCE = re.compile(r"<<<conversation [0-9a-f]+>>>\n(.*?)\n<<<end conversation", re.DOTALL)
_KB = re.compile(r"<<<kb [0-9a-f]+>>>\n\[[^\]]*\] [^\n]*\n(.*?)\n<<<end kb", re.DOTALL)


def _schema_title(body: dict[str, Any]) -> str | None:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    return schema.get("title")


def _text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _customer(body: dict[str, Any]) -> dict[str, Any]:
    text = _text(body)
    sent = re.search(r"You have sent (\d+) message", text)
    planned_match = re.search(
        r"\((?:send the next one|say the next one that is left)\): (\[.*?\])\n", text, re.DOTALL
    )
    planned: list[str] = []
    if planned_match:
        try:
            planned = json.loads(planned_match.group(1))
        except ValueError:
            planned = []
    n = int(sent.group(1)) if sent else 0
    if n < len(planned):
        return {"message": planned[n]}
    return {"message": "It's Jamie Parker, 087 123 4567. Any morning next week works for me."}


def _responder(body: dict[str, Any]) -> dict[str, Any]:
    text = _text(body)
    passage = _KB.search(text)
    said = ""
    if passage:
        first = re.split(r"(?<=[.!?])\s+", passage.group(1).strip())[0]
        said = f"From our notes: {first[:220]} "
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    last = str(users[-1].get("content") or "") if users else ""
    if re.search(r"\d{3}", last):  # the customer gave their details: the booking is sent
        return {
            "reply": "Thank you! I've passed your request to our reception team, who will call "
            "you within one working day to confirm the time. Is there anything else I can help "
            "you with?",
            "extracted": {},
            "status": "COMPLETE",
        }
    reply = (
        f"Thanks for getting in touch! {said}I'd be happy to help you book an appointment. "
        "Could you tell me your full name and the best phone number to reach you, and which day "
        "suits you? Our team will confirm the booking with you by phone."
    )
    return {"reply": reply, "extracted": {}, "status": "AWAITING_RESPONSE"}


def _replies(conversation: str) -> list[tuple[int, str]]:
    """(turn, the reply's first line) of each JSON line of a fenced conversation."""
    turns = [json.loads(line) for line in conversation.splitlines() if line.strip()]
    return [(t["turn"], t["assistant"].split("\n")[0]) for t in turns]


def _review(body: dict[str, Any]) -> dict[str, Any]:
    text = untagged(_text(body))  # fence tags are random per call
    conversation = _FENCE.search(_text(body))
    replies = _replies(conversation.group(1)) if conversation else []
    findings = []
    for n, (turn, reply) in enumerate(replies[:1] + replies[-1:] if len(replies) > 1 else replies):
        words = reply.split()
        quote = " ".join(words[2:12]) if len(words) > 12 else reply
        severity = "critical" if n == 0 and _digest(text) % 5 == 0 else ("major", "minor")[n % 2]
        findings.append(
            {
                "rule_id": ("unhelpful_answer", "unsupported_fact")[n % 2],
                "severity": severity,
                "turn": int(turn),
                "quote": quote,
                "rationale": "The reply asks for details again instead of answering the "
                "customer's question first, and it states a detail the knowledge base does not "
                "support; a customer reading it would not know what to expect.",
                "fix_target": "prompt",
                "fix_text": "Answer the customer's question from the knowledge base before "
                "asking for booking details, and say when the information is not available.",
                "effort": "S",
            }
        )
    return {"findings": findings}


def _phrasing(body: dict[str, Any]) -> dict[str, Any]:
    text = _text(body)
    ranks = [int(r) for r in re.findall(r"^rank (\d+) ", text, re.MULTILINE)]
    titles = re.findall(r"^current title: (.*)$", text, re.MULTILINE)
    return {
        "actions": [
            {
                "rank": rank,
                "title": title[:150] or "Fix the linked findings",
                "text": "The linked findings show the assistant answering without support from "
                "its knowledge base. Update the prompt and the knowledge base so it answers only "
                "from what the business wrote, and re-run this test set to confirm the fix.",
            }
            for rank, title in zip(ranks, titles, strict=False)
        ]
    }


def realistic_brain(
    *, seed: int, scenarios: int, max_turns: int, start: date
) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """A brain for FakeOpenAI writing what each role of a run at `seed` and as-of date `start`
    asks for."""
    from generator.manifest import build_manifest
    from generator.scenarios import build_blueprints, plan_scenarios
    from qalab.org_folder import DEMO_ORG_DIR, load_org_folder

    org = load_org_folder(DEMO_ORG_DIR)
    plan = plan_scenarios(org, scenarios=scenarios, seed=seed)
    blueprints = build_blueprints(org, plan, max_turns=max_turns, seed=seed, start=start)

    def brain(body: dict[str, Any]) -> dict[str, Any] | None:
        title = _schema_title(body)
        if title == "FixtureNotes":
            return {"markdown": NOTES}
        if title == "Manifest":
            return build_manifest(org).model_dump(mode="json", exclude={"instructions"})
        if title == "BlueprintSet":
            return {"blueprints": [b.model_dump(mode="json") for b in blueprints]}
        if title == "CustomerMove":
            return _customer(body)
        if title == "ResponderReply":
            return _responder(body)
        if title == "LlmReview":
            return _review(body)
        if title == "Confirmation":
            return {"confirmed": True, "rationale": "The quoted reply states it; confirmed."}
        if title == "ActionPhrasing":
            return _phrasing(body)
        return None

    return brain


def stage_of(purpose: str) -> str:
    """The pipeline stage of a ledger row's purpose."""
    head = purpose.split(":", 1)[0]
    if head in ("fixture", "manifest", "blueprints"):
        return "generation"
    if head in ("customer", "responder", "preflight"):
        return "simulation"
    if purpose == "judge:actions":
        return "actions"
    if ":confirm" in purpose:
        return "judging:confirm"
    return "judging" if head == "judge" else head


def token_table(run_id: int) -> dict[tuple[str, str], dict[str, int]]:
    """(role, stage) -> reserved, used, calls, denied, from the run's ledger rows."""
    from runs.models import LlmCall

    table: dict[tuple[str, str], dict[str, int]] = {}
    for call in LlmCall.objects.filter(run_id=run_id):
        row = table.setdefault(
            (call.role, stage_of(call.purpose)),
            {"reserved": 0, "used": 0, "calls": 0, "denied": 0, "fallback": 0, "prompt": 0},
        )
        if call.status == "denied":
            row["denied"] += 1
            continue
        if call.status in ("fallback", "replayed"):
            row["fallback"] += call.status == "fallback"
            continue
        row["reserved"] += call.reserved
        row["used"] += call.actual or 0
        row["prompt"] += call.prompt_tokens or 0
        row["calls"] += 1
    return table


def format_table(table: dict[tuple[str, str], dict[str, int]]) -> str:
    lines = [f"{'role':10} {'stage':16} {'reserved':>9} {'used':>8} {'calls':>5} {'denied':>6}"]
    for (role, stage), row in sorted(table.items()):
        lines.append(
            f"{role:10} {stage:16} {row['reserved']:9,} {row['used']:8,} {row['calls']:5} "
            f"{row['denied']:6} {row['prompt']:8,} {row['fallback']:6}"
        )
    used = sum(r["used"] for r in table.values())
    lines.append(f"{'total':27} {sum(r['reserved'] for r in table.values()):9,} {used:8,}")
    return "\n".join(lines)
