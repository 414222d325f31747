"""Issue 32 (points 4 and 6): every finding's evidence is verbatim, and one defect is one finding.

`judge.evidence` is the one evidence check of every layer: a quote must be in what it cites and
a subject in one of its quotes (normalized: NFKC, case, whitespace, typographic quotes and
dashes; nothing fuzzy for a rule), else the finding is dropped and counted by rule. One sentence
with several wrong values is one finding.
"""

from __future__ import annotations

import pytest

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.dialogues import Dialogue, judge_dialogue
from judge.engine import judge_case
from judge.evidence import normalize, quote_found
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from tests.judge.factories import demo_manifest, make_case, make_config

KB = "Opening hours: every day 06:00-22:00.\nDay pass €12. Swim lesson €25."


def _dialogue(*messages: str, kb: str = KB) -> Dialogue:
    roles = ["customer", "bot"] * len(messages)
    return Dialogue.model_validate(
        {
            "id": "d",
            "kb": [{"id": "kb", "text": kb}] if kb else [],
            "turns": [{"role": r, "text": t} for r, t in zip(roles, messages, strict=False)],
        }
    )


# --------------------------------------------------------------------------- the one verifier


def test_normalization_forgives_layout_but_not_words():
    text = "We\u2019re open \u201cevery\u201d day \u2013 8am\u00a0to\u200b 6pm.\n\nThanks!"
    assert quote_found('we\'re open "every" day - 8am to 6pm', text)
    assert quote_found("WE\u2019RE   OPEN", text)
    assert quote_found("\uff26\uff52\uff45\uff45", "free")  # full-width letters (NFKC)
    assert normalize("  \u2018Hello\u2019.  ") == "hello"
    # A rule's quote must be there, not nearly there: no fuzzy match without `fuzzy`.
    assert not quote_found("We're open every day 8am to 6pm", text)
    assert quote_found("We're open every day 8am to 6pm", text.replace(" –", ""), fuzzy=True)
    assert not quote_found("", text)


class _Inventing(Check):
    """A rule that quotes words the conversation never had, as issue 32 saw one do."""

    check_id = "partner_contradiction"

    def __init__(self, quote: str, subject: str) -> None:
        self.quote, self.subject = quote, subject

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        return [
            self.finding(
                case,
                severity="major",
                turn_index=0,
                subject=self.subject,
                evidence=[
                    Evidence(source="reply", quote=case.turns[0].reply, turn=0),
                    Evidence(source="customer", quote=self.quote, turn=0),
                ],
                rationale="constructed",
                fix_target="skill",
                fix_text="constructed",
                effort="S",
                confidence=0.8,
            )
        ]


@pytest.mark.parametrize(
    "quote, subject",
    [
        ("E-bike check, The E-bike check is", "full service"),  # pieces joined: not a quote
        ("e-bike check", "E-bike check and a full service"),  # the subject is nobody's words
    ],
)
def test_a_deterministic_finding_that_is_not_verbatim_is_dropped_and_counted(
    monkeypatch, quote, subject
):
    import judge.engine

    case = make_case(
        [("Can I book the e-bike check for Saturday?", "Booked: full service, Saturday 10:00.")]
    )
    real = judge.engine.all_checks
    monkeypatch.setattr(judge.engine, "all_checks", lambda: [_Inventing(quote, subject)])
    judgement = judge_case(case, demo_manifest(), config=make_config())
    assert judgement.findings == []  # dropped, not downgraded
    assert judgement.unsupported_by_rule == {"partner_contradiction": 1}
    # The same finding quoting the customer's real words is kept.
    monkeypatch.setattr(
        judge.engine, "all_checks", lambda: [_Inventing("the e-bike check", "full service")]
    )
    judgement = judge_case(case, demo_manifest(), config=make_config())
    assert [f.rule_id for f in judgement.findings] == ["partner_contradiction"]
    assert judgement.unsupported_by_rule == {}
    monkeypatch.setattr(judge.engine, "all_checks", real)


def test_a_chosen_item_is_quoted_in_the_customers_own_words():
    """The issue's invented quote: the customer's choice was read back as catalog names joined
    ("E-bike check, The E-bike check is"), words the conversation never had."""
    kb = (
        "E-bike check: £25\n"
        "The E-bike check is £25 and takes 30 min.\n"
        "Full service: £80, 2 hours.\n"
        "Puncture repair: £15"
    )
    dialogue = _dialogue(
        "Hi, can I get the e-bike check on Saturday please?",
        "Great, you're booked in for a full service on Saturday.",
        kb=kb,
    )
    [finding] = [f for f in judge_dialogue(dialogue).findings if f.rule == "partner_contradiction"]
    customer = next(e for e in finding.evidence if e["source"] == "customer")
    assert customer["quote"] == "e-bike check"
    assert customer["quote"] in dialogue.turns[0].text
    assert finding.subject in dialogue.turns[1].text.casefold()


def test_days_the_customer_gave_are_quoted_as_one_span_of_their_message():
    dialogue = _dialogue(
        "Could I come in Friday or Saturday morning for a lesson?",
        "Lovely, I've booked your swim lesson for Sunday.",
    )
    [finding] = [f for f in judge_dialogue(dialogue).findings if f.rule == "partner_contradiction"]
    customer = next(e for e in finding.evidence if e["source"] == "customer")
    assert customer["quote"] == "Friday or Saturday"  # not "Friday, Saturday"


def test_every_subject_of_the_demo_checks_is_verbatim_and_keys_stay_canonical():
    case = make_case(
        [
            ("How much is a clean?", "A hygiene clean is €60. We are closed on Saturdays."),
            ("Ok, Mary O'Brien, 087 123 4567", "Thanks! What's your name? Your phone? Date?"),
        ],
        actual_status="AWAITING_RESPONSE",
    )
    findings = judge_case(case, demo_manifest(), config=make_config()).findings
    for finding in findings:
        assert any(normalize(finding.subject) in normalize(e.quote) for e in finding.evidence)
    # What the Top 5 groups by and the fingerprint hashes stays the canonical form.
    assert {(f.rule_id, f.key) for f in findings} == {
        ("unsupported_facts", "money:60 EUR"),
        ("contradicts_manifest", "hours: closed on Saturday"),
        ("extraction_accuracy", "full_name"),
        ("extraction_accuracy", "phone"),
        ("final_status", "expected COMPLETE, got AWAITING_RESPONSE"),
    }
    [hours] = [f for f in findings if f.rule_id == "contradicts_manifest"]
    assert hours.subject == "We are closed on Saturdays."


# --------------------------------------------------------------------------- one defect


def test_a_sentence_with_two_wrong_times_is_one_finding_naming_both():
    dialogue = _dialogue(
        "When are you open?",
        "We're open every day from 05:45 to 23:15. See you soon!",
    )
    [finding] = [f for f in judge_dialogue(dialogue).findings if f.rule == "unsupported_facts"]
    assert finding.severity == "critical"
    assert finding.subject == "05:45 to 23:15"
    [quote] = [e["quote"] for e in finding.evidence]
    assert "05:45" in quote and "23:15" in quote
    assert "'05:45' and '23:15'" in finding.rationale


def test_two_wrong_prices_in_one_sentence_are_one_finding_and_other_sentences_are_not():
    dialogue = _dialogue(
        "How much is a day pass?",
        "A day pass is €14, or €19 with the sauna. Lessons are €30.",
    )
    findings = [f for f in judge_dialogue(dialogue).findings if f.rule == "unsupported_facts"]
    assert sorted(f.subject for f in findings) == ["€14, or €19", "€30"]


def test_the_wrong_hours_sentence_against_the_manifest_is_one_finding():
    """DESIGN §9, one defect = one finding: "open every day from 05:45 to 23:15" contradicts
    the opening time, the closing time and the closed Sunday; even when the KB itself says so
    (no unsupported fact to absorb them), it is one critical finding, not three."""
    reply = "We are open every day from 05:45 to 23:15, Sundays included."
    kb = "Opening hours: every day 05:45 to 23:15."
    case = make_case([("What are your hours?", reply)], fixture_text=kb)
    findings = judge_case(case, demo_manifest(), config=make_config()).findings
    [finding] = [f for f in findings if f.rule_id == "contradicts_manifest"]
    assert finding.subject in reply and "05:45" in finding.subject and "23:15" in finding.subject
    assert "05:45" in finding.rationale and "23:15" in finding.rationale
    assert "Sunday" in finding.rationale
    assert finding.key.count(" + ") == 2  # each contradicted subject keyed


def test_a_question_repeated_in_every_turn_is_one_finding_with_every_ask():
    case = make_case(
        [
            ("Hi", "What is your phone number?"),
            ("Mary", "What is your phone number?"),
            ("Why?", "What is your phone number?"),
            ("Fine", "What is your phone number?"),
        ]
    )
    findings = judge_case(case, demo_manifest(), config=make_config()).findings
    [repeat] = [f for f in findings if f.rule_id == "repeated_question"]
    assert repeat.severity == "major"
    assert [e.turn for e in repeat.evidence] == [0, 1, 2, 3]
