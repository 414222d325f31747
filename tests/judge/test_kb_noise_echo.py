"""kb_noise_echo: a reply that repeats the KB's noise (planted or inferred) to the customer."""

from __future__ import annotations

import pytest

from generator.fixtures import build_fixture, org_documents
from generator.schemas import Fixture, FixtureDocument, NoiseLevel, PlantedNoise
from judge.checks.kb_noise_echo import KbNoiseEcho
from judge.examples import DEFAULT_KB
from judge.kb_noise.common_words import COMMON_WORDS
from judge.schemas import CaseTranscript, Finding
from qalab.domain import KbDocumentSpec
from qalab.llm import NullLedger, OfflineEngine
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source

CONFIG = make_config()

# A KB the way the generator leaves it: its planted typos listed in PLANTED.
PLANTED_KB = """\
## Booking
Colletc full name, phone number, service and preferred date before confirming a booking.
Collect the email address too when the customer offers it.

## Urgent problems
Outside opening hours, follow the emergency poliy: go to the nearest emergency department.
Every policy is on the website.

## Mouthguard fitting
Cusom sports mouthguard, two visits (impression and fitting). Price: 150 EUR.
"""
PLANTED = [
    PlantedNoise(kind="typo", text="Colletc", clean="Collect"),
    PlantedNoise(kind="typo", text="poliy", clean="policy"),
    PlantedNoise(kind="typo", text="Cusom", clean="Custom"),
]


def _case(
    *turns: tuple[str, str], kb: str = PLANTED_KB, noise: list[PlantedNoise] | None = None
) -> CaseTranscript:
    case = make_case(list(turns), fixture_text=kb)
    if noise:
        case = case.model_copy(update={"fixture": case.fixture.model_copy(update={"noise": noise})})
    return case


def echoes(
    *turns: tuple[str, str], kb: str = PLANTED_KB, noise: list[PlantedNoise] | None = None
) -> list[Finding]:
    case = _case(*turns, kb=kb, noise=noise)
    findings = KbNoiseEcho().run(case, demo_manifest(), CONFIG)
    for finding in findings:
        assert finding.evidence
        assert all(quote_is_in_source(case, e) for e in finding.evidence), finding
        assert finding.subject in case.turns[finding.turn_index].reply
    return findings


# --------------------------------------------------------------------------- planted noise


def test_a_planted_typo_echoed_is_a_minor_finding_for_the_bot() -> None:
    # The generator planted it: the org's KB does not have it, so the fix is the bot's.
    [finding] = echoes(
        ("what do you need from me?", "Colletc full name and phone number, please."),
        noise=PLANTED,
    )
    assert finding.rule_id == "kb_noise_echo"
    assert (finding.severity, finding.fix_target, finding.turn_index) == ("minor", "prompt", 0)
    assert finding.subject == "Colletc"
    assert [e.quote for e in finding.evidence] == ["Colletc"]
    assert finding.evidence[0].source == "reply"
    assert finding.confidence == 0.9
    assert "'Colletc' -> 'Collect'" in finding.fix_text
    assert "correct obvious misspellings" in finding.fix_text
    assert "in the KB" not in finding.fix_text


def test_a_planted_typo_matches_whole_words_in_any_case() -> None:
    [finding] = echoes(("policy?", "Our EMERGENCY POLIY applies."), noise=PLANTED)
    assert finding.subject == "POLIY"
    assert echoes(("policy?", "Our emergency poliyx applies."), noise=PLANTED) == []


def test_the_clean_word_is_no_finding() -> None:
    reply = "Collect full name; the emergency policy applies; custom sports mouthguard."
    assert echoes(("hi", reply), noise=PLANTED) == []


def test_a_typo_the_customer_typed_first_is_no_finding() -> None:
    assert (
        echoes(("whats ur emergency poliy", "Our emergency poliy: go to A&E."), noise=PLANTED) == []
    )
    # ... but only what the customer wrote so far: a later message does not excuse it.
    findings = echoes(
        ("hi", "The emergency poliy applies."),
        ("what poliy?", "The emergency poliy."),
        noise=PLANTED,
    )
    assert [f.turn_index for f in findings] == [0]


def test_a_planted_form_that_is_also_a_correct_word_is_no_finding() -> None:
    noise = [
        *PLANTED,
        PlantedNoise(kind="typo", text="trail", clean="trial"),
        PlantedNoise(kind="typo", text="tiral", clean="trail"),
        PlantedNoise(kind="typo", text="Dentl", clean="Dental"),
    ]
    kb = PLANTED_KB + "A free trail session. The tiral starts here. Harbour Lane Dentl.\n"
    # "trail" is the clean form of another planted typo; "Dental" is in the manifest (org name)
    assert echoes(("hi", "The trail starts at the gate."), kb=kb, noise=noise) == []
    [finding] = echoes(("hi", "The tiral starts here."), kb=kb, noise=noise)
    assert finding.subject == "tiral"


def test_one_finding_per_turn_quotes_every_noisy_span() -> None:
    findings = echoes(
        ("hi", "Hello!"),
        ("what do I bring", "Colletc full name. Cusom sports mouthguard. Colletc it all."),
        noise=PLANTED,
    )
    [finding] = findings
    assert finding.turn_index == 1
    assert finding.subject == "Colletc"
    assert [e.quote for e in finding.evidence] == ["Colletc", "Cusom"]
    assert all(e.turn == 1 for e in finding.evidence)
    assert "Cusom" in finding.rationale and "Custom" in finding.rationale


def test_planted_mode_does_not_guess_beyond_the_record() -> None:
    # "Neevr" is a typo, but the fixture says what was planted and it is not in the record.
    kb = PLANTED_KB + "Neevr diagnose over chat.\n"
    assert echoes(("hi", "Neevr diagnose over chat."), kb=kb, noise=PLANTED) == []
    assert echoes(("hi", "Neevr diagnose over chat."), kb=kb)  # inferred, without a record


# --------------------------------------------------------------------------- markup


@pytest.mark.parametrize(
    ("kb_line", "reply", "subject"),
    [
        ("Price:&nbsp;80 EUR", "Here is what our information says: Price:&nbsp;80 EUR.", "&nbsp;"),
        ("Closed on Sunday.<br>Open Monday.", "We are closed on Sunday.<br>Open Monday.", "<br>"),
        (
            "| Treatment | Price |\n| --- | --- |\n| Clean | 80 EUR |",
            "Here is what our information says: | Treatment | Price | | --- | --- | Clean 80 EUR",
            "| --- | --- |",
        ),
        ("**Price:** 80 EUR", "A hygiene clean **Price: 80 EUR.", "**"),
        (
            "## Booking\nCollect full name",
            "Here is what our information says: ## Booking Collect",
            "##",
        ),
        ("• Preferred date", "To book we need: • Preferred date", "•"),
        (
            "Hygiene clean | 80 EUR | 45 min",
            "Here is what our information says: Hygiene clean | 80 EUR | 45 min.",
            "|",
        ),
    ],
)
def test_markup_debris_the_kb_has_is_a_finding(kb_line: str, reply: str, subject: str) -> None:
    kb = f"{PLANTED_KB}\n{kb_line}\n"
    [finding] = echoes(("hi", reply), kb=kb)
    assert finding.subject == subject
    assert finding.evidence[0].quote == subject
    assert finding.confidence == 0.8
    assert "from the KB" in finding.fix_text


@pytest.mark.parametrize(
    "reply",
    [
        "A hygiene clean is 80&nbsp;EUR.",  # an entity the KB does not have: the bot's own
        "Closed on Sunday.<br>Open Monday.",
        "**Price:** 80 EUR",  # balanced emphasis is formatting, not debris
        "| Treatment | Price |\n| --- | --- |\n| Clean | 80 EUR |",  # a table laid out on purpose
        "## Booking\nCollect full name",  # a heading on its own line
        "- Preferred date\n- Preferred time",  # bullets at line starts
        "Call us | email us",  # one separator is punctuation, not a table row
        "Ask for room #5 or 2 * 3 chairs.",
    ],
)
def test_markup_the_kb_does_not_spell_that_way_is_no_finding(reply: str) -> None:
    kb = f"{PLANTED_KB}\n| Treatment | Price |\n| --- | --- |\n**Price:** 80 EUR\n## Booking\n"
    assert echoes(("hi", reply), kb=kb) == []


def test_planted_markup_has_the_planted_confidence() -> None:
    kb = PLANTED_KB + "• Preferred date\n"
    noise = [*PLANTED, PlantedNoise(kind="markup", text="•", clean="-")]
    [finding] = echoes(("hi", "To book we need: • Preferred date"), kb=kb, noise=noise)
    assert (finding.subject, finding.confidence) == ("•", 0.9)


# --------------------------------------------------------------------------- inferred noise


def test_an_inferred_typo_without_a_planted_record_is_a_finding() -> None:
    # DEFAULT_KB misspells "outside" and "address"; the fixture carries no record of it.
    findings = echoes(
        ("hi", "Outisde opening hours, go to the nearest emergency department."),
        ("ok", "We need an email adddress."),
        kb=DEFAULT_KB,
    )
    assert [(f.turn_index, f.subject) for f in findings] == [(0, "Outisde"), (1, "adddress")]
    assert all(0.5 <= f.confidence < 0.9 for f in findings)
    assert "'address'" in findings[1].fix_text


@pytest.mark.parametrize(
    ("kb_text", "reply", "subject"),
    [
        ("Colletc full name and phone before you book.", "Colletc full name, please.", "Colletc"),
        (
            "Follow the emergency poliy. The cancellation policy and the payment policy are on "
            "the policy page.",
            "Our emergency poliy applies.",
            "poliy",
        ),
        ("Neevr diagnose over chat.", "We neevr diagnose over chat.", "neevr"),
        ("To reqquest a slot, call us.", "To reqquest a slot, call us.", "reqquest"),
        # a long word missing a letter of a known word
        (
            "Vaccinaton apointments are 20 min. Booster vaccination: 55 EUR.",
            "Vaccinaton apointments are 20 min.",
            "Vaccinaton",
        ),
    ],
)
def test_inferred_typos_of_each_kind(kb_text: str, reply: str, subject: str) -> None:
    [finding] = echoes(("hi", reply), kb=f"{kb_text}\nWe are a dental practice.\n")
    assert finding.subject == subject


def test_inferred_typos_still_respect_the_customer() -> None:
    reply = "Outisde opening hours, go to the nearest emergency department."
    assert echoes(("hi", reply), kb=DEFAULT_KB)
    assert echoes(("what do i do outisde hours", reply), kb=DEFAULT_KB) == []


@pytest.mark.parametrize(
    ("kb_text", "reply"),
    [
        # names: capitalised inside a sentence in the KB
        (
            "Our dentists are Dr. Aoife Brennan and Dr. Tomasz Nowak. Car park on Tara Street.",
            "Dr. Aoife Brennan or Dr. Tomasz Nowak can see you; park on Tara Street.",
        ),
        # brands and product names
        (
            "We fit Invisalign aligners and sell Sonicare brushes; pay with iPhone or Revolut.",
            "We fit Invisalign aligners and sell Sonicare brushes; pay with iPhone or Revolut.",
        ),
        # codes and acronyms
        (
            "Eircode D02 X285. Prices incl. VAT. PRSI customers welcome.",
            "Prices incl. VAT; PRSI welcome.",
        ),
        # plurals and other forms that differ in the last letter
        (
            "One filling. Two fillings. A fitted guard. A cleaner smile.",
            "Fillings and a fitted guard.",
        ),
        # British and American spellings side by side
        (
            "Our centre is in the city center. Colour or color. Organise or organize. "
            "Cancelled or canceled. A licence, a license. Tyre or tire.",
            "Our centre: colour, organise, cancelled, licence, tyre.",
        ),
        # valid rare words one edit from a frequent word of the KB
        (
            "Price list. Price list. Price list. Take the lift. The order of service. "
            "Order online. Order now. Older children. A scale and polish. Sale prices. Sale.",
            "Take the lift to our older children's room for a scale and polish.",
        ),
        # long words one letter apart that are both words
        (
            "Travelling with a pet? Traveling pets need a passport. A brushed coat, a crushed "
            "leg. Dental appointment, dental appointments.",
            "Traveling pets need a passport and a brushed coat.",
        ),
        # an email address and a web address are not words
        (
            "Mail hello@harbourlanedentl.ie or see https://harbourlanedentl.ie/bookng",
            "Mail hello@harbourlanedentl.ie or see https://harbourlanedentl.ie/bookng",
        ),
    ],
)
def test_names_brands_codes_forms_and_rare_words_are_no_finding(kb_text: str, reply: str) -> None:
    assert echoes(("hi", reply), kb=f"{kb_text}\nHarbour Lane Dental, Dublin.\n") == []


def test_a_word_not_in_the_kb_is_not_an_echo() -> None:
    # A reply typo of its own is a different defect: the KB has nothing to clean.
    assert echoes(("hi", "Whitening is only ofered after a check-up."), kb=DEFAULT_KB) == []


def test_an_empty_kb_yields_nothing() -> None:
    assert echoes(("hi", "Colletc full name &nbsp; | --- |"), kb=" ") == []


def test_the_common_word_list_stays_small_and_lower_case() -> None:
    assert 500 < len(COMMON_WORDS) < 2000
    assert all(w.isalpha() and w.islower() for w in COMMON_WORDS)


# --------------------------------------------------------------------------- end to end


def test_it_finds_a_generated_fixtures_planted_typo_echoed_and_not_its_correction() -> None:
    org = load_org_folder(DEMO_ORG_DIR)
    engine = OfflineEngine(ledger=NullLedger())
    fixture = build_fixture(org, key="fx-01", index=0, level="messy", seed=4, engine=engine)
    typo = next(p for p in fixture.noise if p.kind == "typo")
    line = next(line for line in fixture.text.splitlines() if typo.text in line)
    case = make_case([("hi", f"Here is what our information says: {line}")])
    case = case.model_copy(update={"fixture": fixture})
    findings = KbNoiseEcho().run(case, demo_manifest(), CONFIG)
    assert [f.subject.casefold() for f in findings] == [typo.text.casefold()]
    fixed = case.model_copy(
        update={"turns": [case.turns[0].model_copy(update={"reply": f"Info: {typo.clean}"})]}
    )
    assert KbNoiseEcho().run(fixed, demo_manifest(), CONFIG) == []


# --------------------------------------------------------------------------- the word list


@pytest.mark.parametrize(
    ("kb_line", "reply", "subject", "clean"),
    [
        (
            "Full refund with your reciept.",
            "Bring your reciept for a refund.",
            "reciept",
            "receipt",
        ),
        (
            "Accomodation is not included.",
            "Accomodation is not included.",
            "Accomodation",
            "accommodation",
        ),
        ("Open Wendesday to Sunday.", "We're open Wendesday to Sunday.", "Wendesday", "wednesday"),
        # Scanning garble: "rn" read for "m", digits for letters and letters for digits.
        ("Gift vouchers for any arnount.", "Vouchers for any arnount!", "arnount", "amount"),
        ("Fresh c0ffee all day.", "There is fresh c0ffee all day.", "c0ffee", "coffee"),
        ("Day pass £4O", "A day pass is £4O.", "4O", "40"),
        ("Valid for l2 months.", "It is valid for l2 months.", "l2", "12"),
        ("Doors 7arn-9prn", "Doors open 7arn.", "7arn", "7am"),
        # A doubled l dropped where no suffix follows it is a slip.
        ("Installation usualy takes one day.", "It usualy takes one day.", "usualy", "usually"),
    ],
)
def test_a_kb_misspelling_of_an_everyday_word_is_an_echo(kb_line, reply, subject, clean) -> None:
    [finding] = echoes(("hi", reply), kb=f"{DEFAULT_KB}\n{kb_line}\n")
    assert finding.subject == subject
    assert f"'{clean}'" in finding.rationale.casefold()


@pytest.mark.parametrize(
    ("kb_line", "reply"),
    [
        # Names, clipped words, British spellings, codes and units are not misspellings.
        ("Ask for Siobhan or Isla at the desk.", "Siobhan or Isla will help you."),
        ("Intro offer and physio promo this month.", "Our intro offer and physio promo run now."),
        ("Colour and mould checks; we organise it.", "We organise colour and mould checks."),
        (
            "Bring form CV2 and an A4 copy; 10am-2pm, 1st floor.",
            "Bring CV2 and an A4 copy, 10am, 1st floor.",
        ),
        ("Network: O2 and 3 supported.", "O2 is supported."),
        # British -ise and single-l spellings before a suffix.
        ("Tell us when you call so we can prioritise you.", "They'll prioritise you."),
        ("Travelling? We can fulfil orders and enrol you.", "We can fulfil it while travelling."),
    ],
)
def test_words_names_and_codes_of_the_kb_are_not_echoes(kb_line, reply) -> None:
    assert echoes(("hi", reply), kb=f"{DEFAULT_KB}\n{kb_line}\n") == []


def test_a_kb_heading_label_pasted_into_a_sentence_is_an_echo() -> None:
    kb = f"{DEFAULT_KB}\n**Trial lesson (30 min):** £15\n"
    [finding] = echoes(("a trial?", "Here is what we have: **Trial lesson (30 min):** £15"), kb=kb)
    assert finding.subject == "**"
    # The same label opening its own line is formatting.
    assert echoes(("a trial?", "**Trial lesson (30 min):** £15"), kb=kb) == []


# --------------------------------------------------------------------------- who fixes it


def _generated(org_kb_line: str, *, level: NoiseLevel, seed: int) -> Fixture:
    """A fixture the generator builds for the demo org whose own KB holds `org_kb_line` too."""
    org = load_org_folder(DEMO_ORG_DIR)
    extra = KbDocumentSpec(slug="payments", title="Payments", text=f"# Payments\n{org_kb_line}\n")
    org = org.model_copy(update={"kb": [*org.kb, extra]})
    engine = OfflineEngine(ledger=NullLedger())
    return build_fixture(org, key="fx-01", index=0, level=level, seed=seed, engine=engine)


def _quoting(fixture: Fixture, word: str) -> CaseTranscript:
    line = next(line for line in fixture.text.splitlines() if word in line.split())
    case = make_case([("what do I need to know?", f"Here is what our information says: {line}")])
    return case.model_copy(update={"fixture": fixture})


def test_a_typo_the_generator_planted_is_the_bots_to_fix_never_the_kbs() -> None:
    # Issue 32: the generator's typo is in the fixture only, not in the org's KB.
    fixture = _generated("Payment is due on the day of treatment.", level="messy", seed=4)
    typo = next(p for p in fixture.noise if p.kind == "typo")
    [finding] = KbNoiseEcho().run(_quoting(fixture, typo.text), demo_manifest(), CONFIG)
    assert finding.subject.casefold() == typo.text.casefold()
    assert finding.fix_target == "prompt"
    assert "in the KB" not in finding.fix_text
    assert "correct obvious misspellings" in finding.fix_text


@pytest.mark.parametrize("level", ["messy", "clean"])
def test_a_typo_of_the_orgs_own_kb_is_the_kbs_to_fix(level: NoiseLevel) -> None:
    # The org wrote "Pyament" itself: cleaning its KB removes it at the source.
    fixture = _generated("Pyament is due on the day of treatment.", level=level, seed=4)
    assert "Pyament" in fixture.text  # the noise left the org's own typo alone
    assert all(p.text != "Pyament" for p in fixture.noise)
    [finding] = KbNoiseEcho().run(_quoting(fixture, "Pyament"), demo_manifest(), CONFIG)
    assert finding.subject == "Pyament"
    assert finding.fix_target == "kb"
    assert "Correct 'Pyament' to 'Payment' in the KB" in finding.fix_text


def test_markup_only_in_the_labs_own_documents_is_the_bots_to_fix() -> None:
    # A table rule the lab's price sheet writes, in a fixture whose org documents have none.
    fixture = Fixture(
        key="fx-1",
        noise_level="clean",
        metrics={"line_count": 4.0},
        documents=[
            FixtureDocument(id="kb-about", title="About", text="We are a dental practice."),
            FixtureDocument(
                id="price-sheet",
                title="Prices",
                text="| Treatment | Price |\n| --- | --- |\n| Clean | 80 EUR |",
            ),
        ],
    )
    case = make_case([("hi", "Here is what our information says: | --- | --- | Clean 80 EUR")])
    [finding] = KbNoiseEcho().run(
        case.model_copy(update={"fixture": fixture}), demo_manifest(), CONFIG
    )
    assert finding.subject == "| --- | --- |"
    assert finding.fix_target == "prompt"
    # The same rule in the org's own document is the KB's.
    owned = fixture.model_copy(
        update={
            "documents": [
                FixtureDocument(id=f"kb-{d.id}", title=d.title, text=d.text)
                for d in fixture.documents
            ]
        }
    )
    [finding] = KbNoiseEcho().run(
        case.model_copy(update={"fixture": owned}), demo_manifest(), CONFIG
    )
    assert finding.fix_target == "kb"


def test_org_documents_are_the_kb_folder_of_a_generated_fixture_and_all_of_any_other() -> None:
    fixture = _generated("Payment is due on the day of treatment.", level="messy", seed=4)
    ids = [d.id for d in org_documents(fixture)]
    assert ids and all(i.startswith("kb-") for i in ids)
    assert "kb-payments" in ids and len(ids) < len(fixture.documents)
    by_hand = make_case([("hi", "hello")]).fixture
    assert org_documents(by_hand) == by_hand.documents
