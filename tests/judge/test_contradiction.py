"""judge.contradiction: the lexical self-contradiction scorer, its DECODE evaluation, and the
lexical path of the self_contradiction check on bot transcripts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judge.checks.self_contradiction import SelfContradiction
from judge.contradiction import (
    DECISION_THRESHOLD,
    aligned_pairs,
    clauses,
    contradiction_score,
    decode_record,
    evaluate,
)
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source

DECODE_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "decode_dev.json"


def _record(
    turns: list[tuple[int, str]], last: tuple[int, str], label: str = "contradiction"
) -> dict:
    return {
        "turns": [
            {"turn_id": i, "agent_id": agent, "text": text} for i, (agent, text) in enumerate(turns)
        ],
        "last_utterance": {"turn_id": len(turns), "agent_id": last[0], "text": last[1]},
        "label": label,
    }


# --------------------------------------------------------------------------- the scorer


@pytest.mark.parametrize(
    ("earlier", "utterance", "sentence"),
    [
        ("I love going to the beach every summer.", "I hate going to the beach.", None),
        ("Hi! I have two dogs and a cat.", "I don't have any dogs.", "I have two dogs and a cat."),
        ("I really enjoy my job as a nurse.", "My job as a nurse is so boring.", None),
        ("I am always early for work.", "I'm never early for work, I'm always late.", None),
        ("hello , i'm a vegan and i love animals .", "I eat meat every day, I'm not vegan.", None),
        ("I wish I had a dog.", "My dog is three years old.", None),
    ],
)
def test_a_reversed_statement_scores_as_a_contradiction_and_names_it(earlier, utterance, sentence):
    score, found = contradiction_score([earlier], utterance)
    assert score >= DECISION_THRESHOLD
    assert found == (sentence or earlier)  # the earlier sentence, not the whole turn


def test_the_contradicted_sentence_is_the_one_reversed_not_just_any_earlier_turn():
    earlier = ["I grew up in Texas.", "I like to play the guitar in my free time."]
    score, sentence = contradiction_score(earlier, "I never learned to play the guitar.")
    assert score >= DECISION_THRESHOLD
    assert sentence == "I like to play the guitar in my free time."


@pytest.mark.parametrize(
    ("earlier", "utterance"),
    [
        (["I love going to the beach every summer."], "What do you like to do on weekends?"),
        (["I have two dogs and a cat."], "My favourite band is Queen, they were great live."),
        (["I work at a bank downtown."], "That sounds like a fun trip, where did you stay?"),
    ],
)
def test_a_question_or_an_unrelated_statement_is_no_contradiction(earlier, utterance):
    score, sentence = contradiction_score(earlier, utterance)
    assert score < DECISION_THRESHOLD
    assert sentence is None


def test_negation_stance_and_antonyms_are_read_per_clause():
    [wish] = clauses("I wish I had a dog")
    assert wish.negated
    [polite] = clauses("No problem, happy to help")[:1]
    assert not polite.negated
    not_good, fine = clauses("It is not good, but the view is great")
    assert (not_good.stance, fine.stance) == (-1, 1)
    [pair] = aligned_pairs(["The movie was great."], "The movie was awful.")
    assert pair.antonym and pair.stance_flip and not pair.negation_flip


def test_a_negation_that_keeps_the_stance_is_no_reversal():
    # "not painful" and "comfortable" say the same thing.
    [pair] = aligned_pairs(
        ["A hygiene clean is not painful."], "Most patients say a hygiene clean is comfortable."
    )
    assert not pair.flipped
    [pair] = aligned_pairs(["The hygiene clean is painful."], "The hygiene clean is not painful.")
    assert pair.negation_flip


# --------------------------------------------------------------------------- DECODE records


def test_a_decode_record_splits_the_speakers_turns_their_contexts_and_the_prompt():
    record = decode_record(
        _record(
            [(0, "I like tea."), (1, "Do you like coffee?"), (0, "Not really."), (1, "Why?")],
            (0, "I hate tea."),
        )
    )
    assert record.earlier == ["I like tea.", "Not really."]
    assert record.contexts == ["", "Do you like coffee?"]
    assert record.prompt == "Why?"
    assert record.contradiction is True
    unlabelled = _record([(0, "hi")], (1, "hello"))
    del unlabelled["label"]
    unlabelled["is_contradiction"] = False
    assert decode_record(unlabelled).contradiction is False


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"turns": []}, "missing last_utterance, label"),
        (_record([(0, "hi")], (1, "hello"), label="maybe"), "unknown label 'maybe'"),
        ({**_record([(0, "hi")], (1, "hello")), "turns": "hi"}, "turns must be a list"),
        ({**_record([(0, "hi")], (1, "hello")), "last_utterance": {"text": "x"}}, "last_utt"),
        (["a list"], "expected a JSON object"),
    ],
)
def test_a_bad_decode_record_is_a_value_error_saying_what_is_wrong(item, message):
    with pytest.raises(ValueError, match=message):
        decode_record(item)


def test_evaluate_reports_the_figures_with_contradiction_as_the_positive_class():
    records = [
        _record([(0, "I love the beach."), (1, "Me too.")], (0, "I hate the beach.")),
        _record([(0, "I have two dogs."), (1, "Nice!")], (0, "I don't have any dogs.")),
        _record([(0, "I love the beach."), (1, "Why?")], (0, "Where do you live?"), "no_contra"),
    ]
    records[2]["label"] = "no_contradiction"
    figures = evaluate(records)
    assert figures["n"] == 3
    assert figures["contradictions"] == 2
    assert figures["confusion"] == {"tp": 2, "fp": 0, "tn": 1, "fn": 0}
    assert figures["balanced_accuracy"] == figures["precision"] == figures["recall"] == 1.0
    assert figures["auroc"] == 1.0
    assert evaluate(records[:2])["auroc"] is None  # one label only


@pytest.mark.skipif(not DECODE_DEV.is_file(), reason=f"{DECODE_DEV} is absent (../shared)")
def test_the_scorer_reaches_080_balanced_accuracy_on_the_decode_dev_sample():
    items = json.loads(DECODE_DEV.read_text("utf-8"))
    figures = evaluate(items)
    assert figures["n"] == 1500
    assert figures["balanced_accuracy"] >= 0.80, figures
    assert figures["auroc"] >= 0.87, figures
    # The held-out third (index % 3 == 0, not used for fitting): a regression floor at its
    # measured 0.774 minus noise, not the goal.
    held_out = evaluate(item for i, item in enumerate(items) if i % 3 == 0)
    assert held_out["balanced_accuracy"] >= 0.76, held_out


# --------------------------------------------------------------------------- the check's lexical path


def lexical_findings(*turns: tuple[str, str]) -> list:
    case = make_case(list(turns))
    findings = SelfContradiction().run(case, demo_manifest(), make_config())
    for finding in findings:
        assert all(quote_is_in_source(case, e) for e in finding.evidence), finding
    return findings


@pytest.mark.parametrize(
    "turns",
    [
        (
            ("can my dog come?", "Dogs are welcome in our Garden rooms."),
            ("ok book it", "Our Garden rooms are not pet-friendly, so your dog needs the Loft."),
        ),
        (
            ("parking?", "Parking is free for all patients."),
            ("thanks, see you", "Please note that parking is not free for patients."),
        ),
        (
            ("access?", "Our clinic has step-free wheelchair access."),
            ("great", "Unfortunately the clinic has no wheelchair access."),
        ),
        (
            ("do i need anything?", "You need to bring photo ID to your first visit."),
            ("ok", "You don't need to bring photo ID to your first visit."),
        ),
        (
            ("is the consultation free?", "The first consultation is always free."),
            ("ok", "The first consultation is never free."),
        ),
    ],
)
def test_a_reversed_statement_the_rules_do_not_model_is_a_finding(turns):
    [finding] = lexical_findings(*turns)
    later = turns[1][1]
    assert finding.rule_id == "self_contradiction"
    # The business saying both ways what it has ("our Garden rooms") is a contradictory
    # factual claim: critical; another reversal is major.
    business = all(re.search(r"\b(?:we|our)\b", t[1], re.I) for t in turns)
    assert finding.severity == ("critical" if business else "major")
    assert finding.turn_index == 1
    assert finding.subject in later  # a verbatim span of the later reply
    assert [(e.source, e.turn) for e in finding.evidence] == [("reply", 0), ("reply", 1)]
    assert finding.evidence[0].quote == turns[0][1]
    assert "lexical contradiction score" in finding.rationale


@pytest.mark.parametrize(
    "turns",
    [
        (
            ("are you open sunday?", "We are closed on Sunday."),
            ("saturday?", "We open at 9 on Saturday."),
        ),
        (
            ("where's my booking?", "I'm sorry, I can't find that booking."),
            ("when do you open monday?", "We open at 8:30 on Monday."),
        ),
        (
            ("booking under Smyth?", "I can't find a booking under that name."),
            ("try Smith", "I found your booking under Smith for Tuesday."),
        ),
        (
            ("for my son?", "We don't offer whitening for children."),
            ("and me?", "We offer whitening for adults from 350 EUR."),
        ),
        (
            ("what's included?", "The consultation is not included in the price."),
            ("x-rays?", "The X-rays are included in the price."),
        ),
        (
            ("monday?", "Unfortunately we have no appointments on Monday."),
            ("tuesday?", "We have appointments on Tuesday morning."),
        ),
        (
            ("whitening?", "Whitening is only offered to patients who had a check-up this year."),
            ("I haven't", "Then you need a check-up first; whitening is not offered without one."),
        ),
        (
            ("is it painful?", "A hygiene clean is not painful for most patients."),
            ("ok", "Most patients say the hygiene clean is comfortable."),
        ),
        (
            ("do i need to bring anything?", "You don't need to bring anything."),
            ("and for the x-ray?", "You don't need to bring anything for the X-ray either."),
        ),
    ],
)
def test_customer_service_turns_that_only_look_alike_are_no_finding(turns):
    assert lexical_findings(*turns) == []


def test_an_acknowledged_reversal_is_no_finding():
    turns = (
        ("parking?", "Parking is free for all patients."),
        ("really?", "You're right to ask, sorry for the mix-up: parking is not free for patients."),
    )
    assert lexical_findings(*turns) == []


# --------------------------------------------------------------------------- figures and days


@pytest.mark.parametrize(
    ("turns", "subject"),
    [
        (
            (
                ("what time?", "Check-in closes 45 minutes before departure."),
                (
                    "changes?",
                    "Amend for a fee; since car check-in closes 15 minutes before sailing, come early.",
                ),
            ),
            "since car check-in closes 15 minutes before sailing",
        ),
        (
            (
                ("the APR for £10,000?", "For a loan of £10,000, the representative APR is 6.4%."),
                ("how fast?", "On a £10,000 loan, the representative APR of 9.9% would apply."),
            ),
            "the representative APR of 9.9% would apply.",
        ),
        (
            (
                ("gutter price?", "Gutter clearing: $115."),
                ("again?", "Gutter clearing only $99 this spring!"),
            ),
            "Gutter clearing only $99 this spring!",
        ),
        (
            (
                ("can you pick it up?", "Yes! We offer free collection within 10 miles."),
                ("book it with collection", "Noted. Collection is charged at £15 each way."),
            ),
            "Collection is charged at £15 each way.",
        ),
    ],
)
def test_a_figure_restated_differently_is_a_finding(turns, subject) -> None:
    [finding] = lexical_findings(*turns)
    assert finding.turn_index == 1 and finding.subject == subject


@pytest.mark.parametrize(
    "turns",
    [
        # Another case of the same rate: the sentence names another amount.
        (
            ("APR for £10,000?", "For a loan of £10,000, the representative APR is 6.4%."),
            ("and £6,000?", "For £6,000, the representative APR would be 9.9%."),
        ),
        # Another thing: "consultation" is free, the aids are not.
        (
            ("what's involved?", "Hearing aid consultation: free with assessment."),
            ("aids?", "Hearing aids from €1,200 per pair."),
        ),
        # Room credit of two plans priced differently.
        (
            (
                "flex?",
                "Flex is $149 a month. You also get 2 hours of meeting room credit each month.",
            ),
            (
                "resident?",
                "Resident is $279 a month. It comes with 6 hours of meeting room credit each month.",
            ),
        ),
        # "no additional charge" negates the charge, not the plan the later sentence names.
        (
            ("plus?", "The Plus plan is €22 a month and includes roaming at no additional charge."),
            ("go ahead", "I have submitted the upgrade to the Plus plan."),
        ),
    ],
)
def test_figures_of_different_things_are_no_finding(turns) -> None:
    assert lexical_findings(*turns) == []


def test_welcoming_the_customer_on_a_day_said_closed_is_a_finding() -> None:
    turns = (
        ("hours?", "Open Mon–Sat 10am–7pm. Walk-ins welcome."),
        ("could I pop in sunday then?", "Yes, see you Sunday! No appointment needed."),
    )
    [finding] = lexical_findings(*turns)
    assert finding.subject == "Sunday" and finding.turn_index == 1
    # Declining the closed day, or welcoming on an open one, is consistent.
    assert lexical_findings(turns[0], ("sunday?", "Sorry, we're not open on Sunday.")) == []
    assert lexical_findings(turns[0], ("saturday?", "Yes, see you Saturday!")) == []
