"""KB fixtures: the org's KB plus code-rendered sheets plus engine-written notes, then noise.

Per fixture one engine call writes the prose around the facts (what-to-expect sections, an
internal email, a shift handover, FAQ entries) for a rotating focus of services and policies;
only that is metered. The org's KB documents are carried over verbatim and structured context
is rendered by code (`generator.sheets`), and noise is applied by code afterwards; what the noise
planted (each distinct misspelling and debris mark) is kept on the fixture as `Fixture.noise`.
An org whose own text is too short for the line floor is topped up with fact-free filler
(`generator.filler`).
"""

from __future__ import annotations

import random
import re

from pydantic import BaseModel, Field

from generator import prompts
from generator.domain import WEEKDAYS, hours_by_weekday
from generator.facts import Fact, critical_facts, missing_facts
from generator.filler import filler_stream
from generator.noise import apply_noise, duplicated_line_share
from generator.rng import rng_for
from generator.schemas import Fixture, FixtureDocument, NoiseLevel
from generator.sheets import base_sheets, extra_sheets, policy_question
from qalab.domain import OrgContext, PolicySpec, ServiceSpec
from qalab.llm import Engine

MIN_LINES = 200
# Assembled fixtures aim above the floor: merges may remove a few lines.
TARGET_LINES = 225
# Filler (short orgs only) is mostly short lines, lists and tables, which messy noise merges and
# breaks more often than prose: it fills to a little more, so noise rarely needs a second try.
FILLED_TARGET_LINES = 235
NOISE_ATTEMPTS = 6
FOCUS_SERVICES = 3
FOCUS_POLICIES = 2


class FactPreservationError(RuntimeError):
    """Noise kept destroying a critical fact (or the line floor) on every attempt."""


def _focus(org: OrgContext, index: int) -> tuple[list[ServiceSpec], list[PolicySpec]]:
    """Services and policies fixture `index` writes about; rotating, so fixtures differ."""
    n = len(org.services)
    services = [
        org.services[(index * FOCUS_SERVICES + k) % n] for k in range(min(FOCUS_SERVICES, n))
    ]
    ranked = sorted(org.policies, key=lambda p: not p.critical)
    m = len(ranked)
    policies = (
        [ranked[(index * FOCUS_POLICIES + k) % m] for k in range(min(FOCUS_POLICIES, m))]
        if m
        else []
    )
    return services, policies


def _open_day(org: OrgContext, rng: random.Random) -> str:
    days = sorted(hours_by_weekday(org.hours)) or [0, 1, 2, 3, 4]
    return WEEKDAYS[rng.choice(days)]


def write_notes(
    org: OrgContext, services: list[ServiceSpec], policies: list[PolicySpec], rng: random.Random
) -> str:
    """The offline writer: notes about the focus services and policies, in seeded phrasings."""
    out = ["# What to expect", ""]
    for s in services:
        opener = rng.choice(["Plan about", "Allow roughly", "It usually takes"])
        out += [f"## {s.name}", ""]
        if s.description:
            out.append(s.description)
        if s.duration_text:  # the org's words, which may be no span ("2 visits", "varies")
            out += [f"The price is {prompts.price(org, s)}. Duration: {s.duration_text}.", ""]
        else:
            out += [f"{opener} {s.duration} minutes. The price is {prompts.price(org, s)}.", ""]
    lead, second = services[0], services[-1]
    greeting = rng.choice(["Hi all,", "Hello team,", "Morning everyone,"])
    out += [
        "# Internal email",
        "",
        "From: Front desk",
        "To: All staff",
        f"Subject: {lead.name} questions",
        "",
        greeting,
        "",
        f"customers keep asking about {lead.name}. It is {prompts.price(org, lead)} "
        + (
            f"(time needed: {lead.duration_text})."
            if lead.duration_text
            else f"and takes {lead.duration} min."
        ),
    ]
    if policies:
        out.append(f"Please also remind people: {policies[0].text}")
    out += ["", rng.choice(["Thanks!", "Cheers,", "Thank you,"]), "Front desk", ""]
    out += [f"# Shift handover ({_open_day(org, rng)})", ""]
    out.append(f"- Two customers asked for {second.name}; quoted {prompts.price(org, second)}.")
    out += [f"- Reminder from the policy list: {p.text}" for p in policies[1:]]
    out.append("- Anything not on the price list: take their details, the team gets back.")
    out.append("")
    if policies:
        out += ["# Customer questions", ""]
        for p in policies:
            out += [f"Q: {policy_question(p.id)}", f"A: {p.text}", ""]
    return "\n".join(out)


def _split_documents(text: str) -> list[FixtureDocument]:
    docs, title, body = [], "", []
    for line in [*text.splitlines(), "# "]:
        if line.startswith("# "):
            if title:
                slug = re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")
                docs.append(FixtureDocument(id=f"notes-{slug}", title=title, text="\n".join(body)))
            title, body = line[2:].strip(), []
        else:
            body.append(line)
    return docs


class FixtureNotes(BaseModel):
    """What a model writes for one fixture: markdown notes, one '# ' heading per document."""

    markdown: str = Field(min_length=1)


_NUMBER = re.compile(r"\d+")


def check_notes(org: OrgContext, notes: FixtureNotes) -> None:
    """Notes may restate the org's figures but never add one (a wrong price in a KB is not
    noise, it is a different business). Raises ValueError naming the numbers it does not know."""
    known = set(_NUMBER.findall(prompts.org_brief(org, descriptions=True)))
    known |= set(_NUMBER.findall(" ".join(d.text for d in org.kb)))
    unknown = sorted(set(_NUMBER.findall(notes.markdown)) - known)
    if unknown:
        raise ValueError(f"the notes state figures that are not in the org context: {unknown}")
    if not _split_documents(notes.markdown):
        raise ValueError("the notes have no '# ' document heading")


def notes_messages(
    org: OrgContext, services: list[ServiceSpec], policies: list[PolicySpec]
) -> list[dict[str, str]]:
    """The prompt for one fixture's notes: just the focus slice of the org, plus the task."""
    lines = [prompts.org_header(org), "Services:"]
    lines += [prompts.service_line(org, s, description=True) for s in services]
    if policies:
        lines.append("Policies:")
        lines += [prompts.policy_line(p) for p in policies]
    return prompts.messages(prompts.prompt("fixture_notes").render(org_slice="\n".join(lines)))


def notes_max_tokens(services: list[ServiceSpec], policies: list[PolicySpec]) -> int:
    """Output cap: ~450 characters of framing, each service's name (thrice) and description,
    each policy twice (a note and a Q&A), plus 10% headroom; in estimated tokens (chars / 4)."""
    service_chars = sum(len(s.name) * 3 + len(s.description) + 60 for s in services)
    policy_chars = sum(len(p.text) + 40 for p in policies) * 2
    return int((450 + service_chars + policy_chars) / 4 * 1.1)


def protected_words(org: OrgContext) -> frozenset[str]:
    """Words noise must not misspell: service names, the org name, address, currency, and the
    org's own words for prices and durations ('from', 'gratis', 'about an hour')."""
    words = [org.name, org.contact.address, org.currency, *(s.name for s in org.services)]
    words += [t for s in org.services for t in (s.price_text, s.duration_text)]
    text = " ".join(words)
    return frozenset(w.casefold() for w in re.findall(r"[A-Za-z]+", text))


# The id prefix of the documents a fixture carries over from the org's own `kb/` folder; every
# other document of a generated fixture (sheets, notes, filler) is written by the lab.
ORG_KB_PREFIX = "kb-"


def org_documents(fixture: Fixture) -> list[FixtureDocument]:
    """The documents of `fixture` that are the organization's own KB text. A fixture the lab
    generated (it has `metrics` or a `noise` record, which only `build_fixture` writes) carries
    the org's `kb/` documents under ids `kb-<slug>`, noised like the rest; any other fixture (a
    KB judged from a file, a test's hand-made one) is the org's own text throughout."""
    if not (fixture.metrics or fixture.noise):
        return list(fixture.documents)
    return [d for d in fixture.documents if d.id.startswith(ORG_KB_PREFIX)]


def _kb_documents(org: OrgContext) -> list[FixtureDocument]:
    docs = []
    for doc in org.kb:
        lines = doc.text.strip().splitlines()
        # Fixture.text adds "# title"; drop the document's own first heading to avoid a double.
        if lines and lines[0].lstrip("#").strip() == doc.title:
            lines = lines[1:]
        docs.append(
            FixtureDocument(id=f"{ORG_KB_PREFIX}{doc.slug}", title=doc.title, text="\n".join(lines))
        )
    return docs


def _line_count(docs: list[FixtureDocument]) -> int:
    return Fixture(key="x", noise_level="clean", documents=docs).line_count


def assemble(
    org: OrgContext, notes: list[FixtureDocument], rng: random.Random
) -> list[FixtureDocument]:
    """KB + sheets + notes in a seeded order, topped up with older sheet copies to the target.

    An org whose own text stays short of the target even then (only the required fields, no KB
    documents) is topped up with fact-free filler (`generator.filler`); any other org draws
    nothing more from `rng`, so its fixtures do not change.
    """
    docs = [*_kb_documents(org), *base_sheets(org, rng), *notes]
    rng.shuffle(docs)
    extras = extra_sheets(org, {d.id for d in docs})
    rng.shuffle(extras)
    while _line_count(docs) < TARGET_LINES and extras:
        docs.insert(rng.randrange(len(docs) + 1), extras.pop())
    if _line_count(docs) < TARGET_LINES:
        for filler in filler_stream(org, rng):
            docs.insert(rng.randrange(len(docs) + 1), filler)
            if _line_count(docs) >= FILLED_TARGET_LINES:
                break
    return docs


def build_fixture(
    org: OrgContext,
    *,
    key: str,
    index: int,
    level: NoiseLevel,
    seed: int,
    engine: Engine,
    facts: list[Fact] | None = None,
) -> Fixture:
    """One fixture: notes from the engine, assembly, noise, then fact verification with retries."""
    services, policies = _focus(org, index)
    rng = rng_for(seed, "fixture", key)
    notes = engine.run(
        role="generator",
        purpose=f"fixture:{key}",
        messages=notes_messages(org, services, policies),
        max_tokens=notes_max_tokens(services, policies),
        output=FixtureNotes,
        offline=lambda: FixtureNotes(
            markdown=write_notes(org, services, policies, rng_for(seed, "notes", key))
        ),
        check=lambda n: check_notes(org, n),
    )
    clean = assemble(org, _split_documents(notes.markdown), rng)
    facts = critical_facts(org) if facts is None else facts
    clean_text = Fixture(key=key, noise_level=level, documents=clean).text
    lost = missing_facts(clean_text, facts)
    if lost:
        raise FactPreservationError(
            f"fixture {key}: the clean fixture lacks {', '.join(f.label for f in lost)}"
        )
    protected = protected_words(org)
    last: list[Fact] = []
    for attempt in range(NOISE_ATTEMPTS):
        noisy, metrics, planted = apply_noise(
            clean, level, rng_for(seed, "noise", key, attempt), protected=protected
        )
        fixture = Fixture(key=key, noise_level=level, documents=noisy, noise=planted)
        last = missing_facts(fixture.text, facts)
        if not last and fixture.line_count >= MIN_LINES:
            return fixture.model_copy(
                update={
                    "metrics": {
                        **metrics,
                        "duplicated_line_share": duplicated_line_share(fixture.text),
                        "line_count": float(fixture.line_count),
                        "noise_attempt": float(attempt),
                    }
                }
            )
    detail = ", ".join(f"{f.label} ({f.value})" for f in last) or f"fewer than {MIN_LINES} lines"
    raise FactPreservationError(
        f"fixture {key} ({level}): noise broke {detail} in all {NOISE_ATTEMPTS} attempts"
    )
