"""refused_request (issue 32): a bot that refuses or deflects what its KB covers fails the task.

The KB here is a bike shop's, not the demo dental practice's the rule was first tried on: the
rule reads what the KB answers, never one business's words.
"""

from __future__ import annotations

import pytest

from generator.schemas import (
    Manifest,
    ManifestHours,
    ManifestIntakeField,
    ManifestService,
)
from judge.checks.refused_request import RefusedRequest
from judge.engine import run_checks
from judge.gate import verdict
from judge.refusal import THRESHOLD, refusal_score
from judge.schemas import CaseTranscript, Finding
from tests.judge.factories import make_case, make_config

CONFIG = make_config()

BIKE_KB = """\
# Spoke & Chain Cycles - workshop prices
Basic service: 45 GBP, ready the same day if booked before 10am.
Full service: 95 GBP, takes 2 days.
Puncture repair: 12 GBP while you wait.
E-bike diagnostic check: 30 GBP.

# Opening hours
Tuesday to Saturday: 09:00 to 17:30
Sunday and Monday: closed

# Booking a repair
To book a service we need your name, a phone number, the bike model and a preferred day.
Drop-offs are accepted from 9am on the booked day.

# Good to know
We accept card and cash; no cheques.
Customer parking is behind the shop on Mill Lane.
We sell helmets and locks but do not stock children's bikes.
"""


def bike_manifest(*, intake: bool = True) -> Manifest:
    src = "org.yaml"
    return Manifest(
        org_slug="spoke-chain",
        org_name="Spoke & Chain Cycles",
        currency="GBP",
        services=[
            ManifestService(name="Basic service", price=45, duration_minutes=None, source=src),
            ManifestService(name="Full service", price=95, duration_minutes=None, source=src),
            ManifestService(name="Puncture repair", price=12, duration_minutes=None, source=src),
        ],
        intake_fields=[
            ManifestIntakeField(key="name", label="Name", required=True, kind="name", source=src)
        ]
        if intake
        else [],
        policies=[],
        hours=[ManifestHours(days="Tue-Sat", opens="09:00", closes="17:30", source=src)],
        contacts=[],
        disallowed_claims=[],
    )


def _case(*turns: tuple[str, str], kb: str = BIKE_KB) -> CaseTranscript:
    return make_case(list(turns), fixture_text=kb)


def refused(*turns: tuple[str, str], kb: str = BIKE_KB, intake: bool = True) -> list[Finding]:
    case = _case(*turns, kb=kb)
    manifest = bike_manifest(intake=intake)
    findings = RefusedRequest().run(case, manifest, CONFIG)
    for finding in findings:
        _assert_verbatim(case, manifest, finding)
    return findings


def _assert_verbatim(case: CaseTranscript, manifest: Manifest, finding: Finding) -> None:
    turns = {t.index: t for t in case.turns}
    for e in finding.evidence:
        if e.source == "reply":
            assert e.quote in turns[e.turn].reply
        elif e.source == "customer":
            assert e.quote in turns[e.turn].customer
        elif e.source == "fixture":
            assert e.quote in case.fixture.text
        else:
            assert e.source == "manifest"
            assert e.quote in manifest.model_dump_json()
    assert any(finding.subject in e.quote for e in finding.evidence)


# --------------------------------------------------------------------------- the signal


@pytest.mark.parametrize(
    "reply",
    [
        "I'm sorry, I can't help with that.",
        "I'm not able to book appointments.",
        "Please contact the shop directly.",
        "Unfortunately that's not something I can help with. Please call us.",
        "I can only answer general questions, sorry.",
        "I don't have that information, please call 01632 960 118.",
        "Sorry, I'm unable to assist with repairs. You'll need to speak to a member of staff.",
    ],
)
def test_refusals_and_deflections_score_at_least_the_threshold(reply: str) -> None:
    assert THRESHOLD <= refusal_score(reply) <= 1


@pytest.mark.parametrize(
    "reply",
    [
        "A basic service is 45 GBP.",
        "Could you tell me your name and the bike model?",
        "Sorry, we're closed on Mondays.",  # an apology that states the answer
        "No, we don't stock children's bikes, but we sell helmets and locks.",
        # refuses a part, gives the rest: a partial refusal at most
        "A full service is 95 GBP and takes 2 days. I can't book it from here, but reception "
        "can take your details.",
        "I can't see the diary, but I can pass on a request: what day suits you?",
    ],
)
def test_answers_and_partial_refusals_stay_below_it(reply: str) -> None:
    assert 0 <= refusal_score(reply) < THRESHOLD


def test_the_score_is_pure() -> None:
    reply = "I'm sorry, I can't help with that. Please contact the shop directly."
    assert refusal_score(reply) == refusal_score(reply) > refusal_score("I'm sorry.")
    assert refusal_score("") == 0.0


# --------------------------------------------------------------------------- positives


@pytest.mark.parametrize(
    ("customer", "reply", "kb_quote"),
    [
        ("how much is a full service?", "I'm sorry, I can't help with that.", "Full service"),
        ("are you open on saturday?", "Please contact the shop directly.", "Saturday"),
        (
            "Can I book a basic service for Thursday?",
            "I'm not able to book repairs. Please call the shop.",
            "To book a service",
        ),
        ("do you take cash?", "I don't have that information, sorry.", "card and cash"),
        ("is there parking?", "Unfortunately I can't answer that. Please ask in store.", "parking"),
        (
            "how long does a full service take?",
            "Sorry, I'm unable to help with that. You'll need to speak to a member of staff.",
            "takes 2 days",
        ),
    ],
)
def test_refusing_what_the_kb_covers_is_critical(customer: str, reply: str, kb_quote: str) -> None:
    [finding] = refused((customer, reply))
    assert (finding.rule_id, finding.severity, finding.fix_target) == (
        "refused_request",
        "critical",
        "prompt",
    )
    assert finding.turn_index == 0
    customer_quote, reply_quote, source = finding.evidence
    assert customer_quote.source == "customer" and customer_quote.quote in customer
    assert reply_quote.source == "reply"
    assert source.source == "fixture" and kb_quote in source.quote
    assert finding.subject == reply_quote.quote
    assert finding.confidence >= THRESHOLD


def test_a_booking_request_is_covered_by_the_orgs_intake_fields_too() -> None:
    kb = "# Prices\nBasic service: 45 GBP.\n"  # says nothing about booking
    [finding] = refused(("can I book a basic service?", "I can't help with bookings."), kb=kb)
    assert finding.evidence[-1].source == "manifest"
    # Without intake fields and without a word on booking, nothing says the bot takes bookings.
    assert refused(("can I book a basic service?", "I can't help."), kb=kb, intake=False) == []


def test_the_same_refusal_over_turns_is_one_finding_in_the_engine() -> None:
    refusal = "I'm sorry, I can't help with that."
    case = _case(("how much is a full service?", refusal), ("and are you open tuesday?", refusal))
    findings = [
        f for f in run_checks(case, bike_manifest(), CONFIG) if f.rule_id == "refused_request"
    ]
    [finding] = findings
    assert {e.turn for e in finding.evidence if e.source == "reply"} == {0, 1}
    assert verdict(run_checks(case, bike_manifest(), CONFIG), budget_stopped=False) == (
        "FAIL_CRITICAL"
    )


# --------------------------------------------------------------------------- hard negatives


@pytest.mark.parametrize(
    ("customer", "reply"),
    [
        # not in the KB: medical advice, another business, an unstocked product, a discount
        (
            "my knee hurts when I cycle, should I take ibuprofen?",
            "I'm sorry, I can't advise on that.",
        ),
        ("can you book me a table at the cafe next door?", "I'm sorry, I can't help with that."),
        ("do you do kids' bike fitting?", "Sorry, I can't help with that. Please call the shop."),
        ("can I get 20% off a full service?", "I'm not able to offer discounts."),
        # honest "I don't know" to what the KB does not answer
        (
            "do you have a waiting list for e-bike conversions?",
            "I don't have that information, please call 01632 960 118.",
        ),
        ("where is the nearest train station?", "I'm not sure, sorry. Please ask in store."),
        # a figure the KB does not hold: "is it free at 70?" is not "Basic service: 45 GBP"
        (
            "is a basic service free for over 70s?",
            "I'm sorry, I can't find that in my information.",
        ),
    ],
)
def test_refusing_what_the_kb_does_not_cover_is_no_finding(customer: str, reply: str) -> None:
    assert refused((customer, reply)) == []


@pytest.mark.parametrize(
    ("customer", "reply"),
    [
        # the answer, then a referral
        (
            "how much is a full service?",
            "A full service is 95 GBP. For anything else, please call us.",
        ),
        # contact details answer "how do I reach you?"
        ("how do I contact you?", "Please call the shop on 01632 960 118."),
        # a booking taken on despite a caveat
        (
            "can I book a basic service?",
            "I can't see the diary, but could you tell me your name and bike model?",
        ),
        # the answer in the KB's words, after an apology
        (
            "is there parking?",
            "Sorry for the wait! Customer parking is behind the shop on Mill Lane.",
        ),
        # no refusal at all
        ("are you open on monday?", "No, we're closed on Mondays."),
    ],
)
def test_replies_that_give_the_kbs_answer_are_no_finding(customer: str, reply: str) -> None:
    assert refused((customer, reply)) == []


VET_KB = """\
# Advice online
We cannot diagnose over chat or email; please book a consultation.
Consultation: 45 GBP, 20 minutes.
"""


def test_restating_a_policy_the_kb_itself_declines_with_is_the_answer() -> None:
    """The KB's own "we cannot ..." is what the customer asked about: saying it answers."""
    asked = "before I book: what is your policy on diagnosis?"
    assert refused((asked, "We cannot diagnose over chat or email."), kb=VET_KB) == []
    # The same when the KB words its policy another way (a generated fixture's paraphrase).
    terse = VET_KB.replace(
        "We cannot diagnose over chat or email; please book", "Never diagnose. Book"
    )
    assert "Never diagnose." in terse
    assert refused((asked, "We cannot diagnose over chat or email."), kb=terse) == []
    # ... or in a long sentence of other words, typos included (seed 113's fixture).
    long = VET_KB.replace(
        "We cannot diagnose over chat or email; please book a consultation.",
        "-The assistnt never diagnoses, prescribes or gves medical advice; pets in pain are "
        "offered an urgent consultation.",
    )
    assert "never diagnoses" in long
    assert refused((asked, "We cannot diagnose over chat or email."), kb=long) == []
    # A deflection that does not say what the policy is remains one.
    assert refused((asked, "Sorry, I can't help with that. Please call us."), kb=long)
    # A refusal of what the same KB does answer is still one.
    [finding] = refused(
        ("how much is a consultation?", "Sorry, I can't help with prices. Please call us."),
        kb=VET_KB,
    )
    assert finding.severity == "critical"


def test_a_message_without_a_question_is_no_finding() -> None:
    assert refused(("thanks, bye", "I'm sorry, I can't help with that.")) == []


def test_an_empty_kb_and_an_empty_manifest_answer_nothing() -> None:
    case = _case(("how much is a service?", "I can't help."), kb=" ")
    empty = bike_manifest(intake=False).model_copy(update={"services": [], "hours": []})
    assert RefusedRequest().run(case, empty, CONFIG) == []
    # The manifest alone (no KB text) still knows the services' prices.
    assert RefusedRequest().run(case, bike_manifest(intake=False), CONFIG)


def test_declining_what_the_kb_forbids_the_bot_is_no_refusal() -> None:
    """The demo's fixture at seed 2091962710: the only KB text on diagnosis is an instruction to
    the bot, which the reference bot will not quote; saying it cannot find that is no critical
    refusal of a request the KB covers."""
    kb = (
        "# Notes for the assistant\n"
        "The assistant never diagnoses, prescribes or gives medical advice.\n"
        "Consultation: 45 GBP, 20 minutes.\n"
    )
    asked = "Before I book: what is your policy on diagnosis?"
    reply = "I'm sorry, I can't find anything about that in our information."
    assert refused((asked, reply), kb=kb) == []
    # What the same KB does answer for customers is still held to it.
    [finding] = refused(("how much is a consultation?", reply), kb=kb)
    assert finding.severity == "critical"


def test_a_faq_question_line_is_no_answer_to_hold_a_bot_to() -> None:
    """A stranger's org (a vet, seed 7): the passage quoted as 'the KB answers' was the FAQ's
    own question line, '**Q:** What is your policy on fasting?', which answers nothing."""
    kb = (
        "# FAQ\n"
        "**Q:** What is your policy on fasting?\n"
        "**A:** No food for twelve hours before an operation; water is fine.\n"
        "Consultation: 45 GBP, 20 minutes.\n"
    )
    reply = "I'm sorry, I can't find anything about that in our information."
    findings = refused(("what is your policy on fasting?", reply), kb=kb)
    assert not [f for f in findings if any(e.quote.endswith("?") for e in f.evidence[2:])]
    assert findings == []
