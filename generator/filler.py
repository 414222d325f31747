"""Fact-free filler for fixtures of orgs whose own text is too short for the 200-line floor.

An org folder with only the required fields (a short offering, one service, no KB documents)
renders to a few dozen lines. Real knowledge bases are longer because they are full of text
that states nothing new: the org's own facts asked and answered again, website boilerplate
(cookie, privacy and accessibility notices, directions without figures, etiquette), navigation
debris (menus, breadcrumbs, footers) and tables rebuilt from the service list. This module
writes exactly that, in seeded phrasings.

The rule that makes it safe: filler restates, it never adds. Every price, duration, time,
phone, email, address and website in it is copied from the org context; everything else is
written without a digit, a number word, a weekday or month name or a span of time, so a judge
reading the KB finds no new support and no contradiction in it. `fixtures.assemble` draws from
`filler_stream` only once the org's own documents and their older copies are used up, so an
org with enough text of its own gets none.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from generator.prompts import duration, price
from generator.schemas import FixtureDocument
from generator.sheets import policy_question
from qalab.domain import OrgContext, ServiceSpec

# Services a filler document walks through at most (short orgs have few; this bounds the rest).
MAX_SERVICES = 8

Section = Callable[[OrgContext, random.Random], tuple[str, list[str]]]


def _services(org: OrgContext) -> list[ServiceSpec]:
    return org.services[:MAX_SERVICES]


def _pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def _required(org: OrgContext) -> list[str]:
    return [f.label for f in org.intake_fields if f.required] or [org.intake_fields[0].label]


def faq(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """The org's own facts as customer questions and answers (the same values, asked again)."""
    pairs: list[tuple[str, str]] = []
    offering = " ".join(org.offering.split())
    pairs.append((_pick(rng, f"What does {org.name} do?", "What do you offer?"), offering))
    for s in _services(org):
        pairs.append(
            (
                _pick(rng, f"How much is {s.name}?", f"What does {s.name} cost?"),
                _pick(rng, f"{s.name} is {price(org, s)}.", f"{s.name} costs {price(org, s)}."),
            )
        )
        how_long = _pick(rng, f"How long does {s.name} take?", f"How long is {s.name}?")
        takes = (
            _pick(rng, f"{s.name}: {s.duration_text}.", f"Time needed: {s.duration_text}.")
            if s.duration_text
            else _pick(
                rng, f"{s.name} takes about {s.duration} minutes.", f"Plan {s.duration} min for it."
            )
        )
        pairs.append((how_long, takes))
        if s.description:
            pairs.append((f"What is included in {s.name}?", s.description))
    pairs.append(
        (
            _pick(rng, "What do you need from me to book?", "What details do I give when I book?"),
            f"We need: {', '.join(_required(org))}.",
        )
    )
    pairs.append(
        (
            _pick(rng, "Can I ask for something that is not on the list?", "Do you do other jobs?"),
            _pick(
                rng,
                "We offer the services on our price list. For anything else, please ask before "
                "you book.",
                "Our services are the ones listed on this page; please ask before you book "
                "anything else.",
            ),
        )
    )
    for h in org.hours:
        pairs.append((f"When are you open ({h.days})?", f"{h.days}: {h.opens} to {h.closes}."))
    if org.contact.phone or org.contact.email:
        reach = " or ".join(v for v in (org.contact.phone, org.contact.email) if v)
        pairs.append((_pick(rng, "How can I reach you?", "How do I contact you?"), reach))
    pairs += [(policy_question(p.id), p.text) for p in org.policies]
    lead = _pick(rng, "Q: ", "Question: ", "**Q:** ")
    answer = {"Q: ": "A: ", "Question: ": "Answer: ", "**Q:** ": "**A:** "}[lead]
    lines: list[str] = []
    for question, reply in pairs:
        lines += [f"{lead}{question}", f"{answer}{reply}", ""]
    title = _pick(rng, "FAQ", "Questions we hear a lot", "Customer questions (website)")
    return title, lines


def service_tables(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """Tables rebuilt from the service list: prices, times and what each service is."""
    services = _services(org)
    lines = ["| Service | Price |", "|---|---|"]
    lines += [f"| {s.name} | {price(org, s)} |" for s in services]
    lines += ["", "| Service | Time needed |", "|---|---|"]
    lines += [f"| {s.name} | {duration(s)} |" for s in services]
    described = [s for s in services if s.description]
    if described:
        lines += ["", "| Service | What it is |", "|---|---|"]
        lines += [f"| {s.name} | {s.description} |" for s in described]
    lines += ["", f"All prices in {org.currency}."]
    return _pick(rng, "Service overview", "Services at a glance", "Price and time table"), lines


def navigation(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """Menus and breadcrumbs left over from a copied web page."""
    menu = ["Home", "Services", "Prices", "About us", "Contact", "Book now"]
    lines = [
        _pick(rng, "Skip to main content", "Skip to content", "Jump to navigation"),
        "",
        _pick(rng, " | ".join(menu), " · ".join(menu), "  ".join(menu)),
        "",
        "Menu",
        *[f"- {item}" for item in menu],
        "",
        _pick(rng, "Search this site", "Search...", "Search"),
        "",
    ]
    for s in _services(org):
        lines.append(_pick(rng, f"Home > Services > {s.name}", f"You are here: Home / {s.name}"))
    lines += ["", _pick(rng, "Back to top", "^ Top", "Back to the top of the page")]
    return _pick(rng, "Website navigation", "Site menu (copied)", "Page header"), lines


def footer(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """A web page footer: the org's name, legal links, share buttons."""
    c = org.contact
    lines = [f"© {org.name}. All rights reserved.", ""]
    contact = [v for v in (c.address, c.phone, c.email, c.website) if v]
    lines += [*contact, ""] if contact else []
    lines += [
        _pick(rng, "Imprint | Privacy | Cookies | Accessibility", "Imprint · Privacy · Cookies"),
        _pick(rng, "Share this page: Email · Print", "Share: Email | Copy link | Print"),
        "",
        "Was this page helpful?",
        "Yes / No",
        "",
        _pick(rng, "Thank you for your feedback.", "Thanks for letting us know."),
    ]
    return _pick(rng, "Footer", "Page footer", "Website footer"), lines


def cookie_notice(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """The cookie banner every site carries."""
    lines = [
        _pick(
            rng,
            f"This website uses cookies so that {org.name} can keep the site working.",
            "We use cookies to make this website work and to understand how it is used.",
        ),
        "Some cookies are needed for the site to work; you cannot switch those off.",
        "Others help us see which pages are read, so we can improve them.",
        "",
        _pick(rng, "Accept all", "Accept all cookies"),
        _pick(rng, "Only necessary cookies", "Reject optional cookies"),
        "Cookie settings",
        "",
        "You can change your choice at any time under Cookie settings at the bottom of the page.",
    ]
    return _pick(rng, "Cookie notice", "Cookies", "About cookies on this site"), lines


def privacy_notice(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """What happens to the details a customer gives: purpose-bound, no figures."""
    fields = ", ".join(f.label for f in org.intake_fields)
    lines = [
        _pick(rng, f"{org.name} takes your privacy seriously.", "Your privacy matters to us."),
        "",
        "## What we collect",
        "",
        f"When you book, we ask for: {fields}.",
        "We only ask for what we need to handle your booking.",
        "",
        "## What we use it for",
        "",
        "We use your details to handle your booking and to contact you about it.",
        _pick(rng, "We do not sell your details.", "We never sell your details to anyone."),
        "",
        "## Your rights",
        "",
        "You can ask us which details we hold about you, and ask us to correct or delete them.",
        _pick(rng, "Contact us if you have a question about your data.", "Questions? Ask us."),
    ]
    return _pick(rng, "Privacy notice", "Privacy policy (website)", "Data protection"), lines


def accessibility(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """An accessibility statement about the website, with no claim about the premises."""
    lines = [
        _pick(
            rng,
            f"We want everyone to be able to use the {org.name} website.",
            "We want this website to be easy to use for everyone.",
        ),
        "",
        "You should be able to:",
        "",
        "- zoom in without the text spilling off the screen",
        "- move through the pages with a keyboard",
        "- listen to the pages with a screen reader",
        "",
        "Some older pages are still hard to read. We are working on them.",
        "",
        _pick(
            rng,
            "If something on this site is hard to use, tell us and we will help another way.",
            "If you need information in a different format, ask us.",
        ),
    ]
    return _pick(rng, "Accessibility statement", "Accessibility", "Using this website"), lines


def directions(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """How to find us, without distances, stop numbers or walking times."""
    c = org.contact
    lines = [f"Our address: {c.address}", ""] if c.address else []
    lines += [
        _pick(
            rng,
            f"Search for {org.name} in your map app to get directions.",
            f"Most map apps find us when you search for {org.name}.",
        ),
        "Public transport: check your local journey planner for the best connection.",
        _pick(rng, "Look for our sign at the entrance.", "Our name is on the sign at the door."),
        "",
        _pick(
            rng,
            "If you get lost on the way, contact us and we will guide you.",
            "Cannot find us? Get in touch and we will help.",
        ),
    ]
    return _pick(rng, "How to find us", "Finding us", "Directions"), lines


def etiquette(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """General good manners on both sides of the counter; no times, no fees, no promises."""
    lines = [
        _pick(rng, "A few things that help everyone:", "Some friendly requests:"),
        "",
        "- Please arrive on time for your booking.",
        "- If you cannot come, let us know so someone else can have your slot.",
        "- Tell us about anything that changes before your visit.",
        "- Ask questions whenever something is unclear; we are happy to explain.",
        "- Please treat our team with respect; we do the same for you.",
        "",
        _pick(
            rng,
            f"Thank you for choosing {org.name}.",
            f"Thanks for helping us keep {org.name} a friendly place.",
        ),
    ]
    return _pick(rng, "Before your visit", "House rules", "Good to know"), lines


def booking_form(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """The booking form's field labels, as copied from the web page."""
    lines = [_pick(rng, "Book online", "Request a booking", "Booking request form"), ""]
    for f in org.intake_fields:
        lines.append(f"{f.label}{' *' if f.required else ' (optional)'}")
        if f.choices:
            lines += [f"  ( ) {choice}" for choice in f.choices]
    lines += ["", "Fields marked * are required.", "", _pick(rng, "Send", "Submit", "Send request")]
    lines.append(_pick(rng, "We will get back to you to confirm.", "We confirm every request."))
    return _pick(rng, "Booking form", "Online booking page", "Contact form"), lines


def editor_note(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """The wiki page's own housekeeping: who keeps it current and how."""
    lines = [
        f"This page collects what the {org.name} team needs to answer customers.",
        _pick(rng, "Keep it up to date.", "Please keep it current."),
        "",
        "- If you change a price or a service, update the price list before anything else.",
        "- If something here disagrees with the price list, the price list is right.",
        "- Questions about this page go to the front desk.",
        "",
        _pick(rng, "Last edited by: front desk", "Maintained by the front desk"),
    ]
    return _pick(rng, "About this page", "Read me", "Editor notes"), lines


def writing_style(org: OrgContext, rng: random.Random) -> tuple[str, list[str]]:
    """How the team writes to customers: tone only, no commitments."""
    lines = [
        _pick(rng, "When you write to customers:", "How we write:"),
        "",
        "- Greet the customer and use their name if you know it.",
        "- Use plain words and short sentences.",
        "- Answer the question that was asked before you ask your own.",
        "- Only state what is written in this knowledge base.",
        "- If you do not know something, say so and offer to find out.",
        "",
        _pick(rng, "Sign off with the team name.", f"Sign off as the {org.name} team."),
    ]
    return _pick(rng, "Writing style", "Tone of voice", "Messaging guide"), lines


SECTIONS: tuple[Section, ...] = (
    faq,
    service_tables,
    navigation,
    footer,
    cookie_notice,
    privacy_notice,
    accessibility,
    directions,
    etiquette,
    booking_form,
    editor_note,
    writing_style,
)


def _document(org: OrgContext, section: Section, rng: random.Random, copy: int) -> FixtureDocument:
    title, lines = section(org, rng)
    suffix = "" if copy == 0 else _pick(rng, " (older copy)", " (old version)", " (duplicate)")
    doc_id = f"filler-{section.__name__.replace('_', '-')}" + (f"-copy{copy}" if copy else "")
    return FixtureDocument(id=doc_id, title=title + suffix, text="\n".join(lines).strip() + "\n")


def filler_stream(org: OrgContext, rng: random.Random) -> Iterator[FixtureDocument]:
    """Filler documents without end: every section once in a seeded order, then older copies
    (in fresh phrasings) round after round. The caller takes what it needs."""
    copy = 0
    while True:
        order = list(SECTIONS)
        rng.shuffle(order)
        for section in order:
            yield _document(org, section, rng, copy)
        copy += 1
