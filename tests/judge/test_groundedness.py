"""Groundedness: the support score, the ungrounded_sentence check, metrics and its examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.checks.groundedness import (
    FINDING_THRESHOLD,
    Groundedness,
    claim_of,
    passage_index,
    reply_sentences,
    score_replies,
)
from judge.metrics import auroc, confusion
from judge.support import (
    COEFFICIENTS,
    UNGROUNDED_THRESHOLD,
    baseline_support,
    features,
    sentence_scores,
    support_score,
    tokens,
)
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source

EXAMPLES = Path(__file__).resolve().parents[2] / "judge" / "examples" / "ungrounded_sentence"

KNOWLEDGE = (
    "Elvis Aaron Presley (January 8, 1935 - August 16, 1977) was an American singer, musician "
    "and actor. His music career began in Memphis in 1954, recording at Sun Records with "
    "producer Sam Phillips."
)

# A KB the check retrieves from: long enough to have distinct passages.
KB = """\
# Treatments and prices
All prices are in euro and include VAT.
| Treatment | Price | Time |
|---|---|---|
| Check-up and exam | 65 EUR | 30 min |
| Hygiene clean | 80 EUR | 45 min |
| Teeth whitening | 350 EUR | 90 min |
| Emergency appointment | 95 EUR | 30 min |

# Opening hours
- Monday to Thursday: 08:30 to 18:00
- Friday: 08:30 to 16:00
- Saturday: 09:00 to 13:00
- Sunday: closed

# Getting here
We are on the first floor of 14 Harbour Lane, Dublin 2, with lift access.
There is no parking at the practice; the closest car park is on Tara Street.

# Booking
Reception confirms every request by phone within one working day.

# Cancellations
Appointments cancelled with less than 24 hours notice, or missed, are charged a fee of 30 EUR.
Whitening is only offered to patients who had a check-up with us in the last six months.
"""


def _check(turns: list[tuple[str, str]]):
    case = make_case(turns, fixture_text=KB)
    return case, Groundedness().run(case, demo_manifest(), make_config())


# --------------------------------------------------------------------------- support_score


def test_support_is_a_probability_and_verbatim_scores_high():
    score = support_score(KNOWLEDGE, "Elvis Presley was an American singer, musician and actor.")
    assert 0.0 <= score <= 1.0
    assert score > 0.9


def test_a_faithful_paraphrase_outranks_an_entity_swap():
    faithful = support_score(KNOWLEDGE, "His career in music began in Memphis in 1954.")
    swapped = support_score(KNOWLEDGE, "His career in music began in Nashville in 1954.")
    assert faithful > swapped


def test_a_novel_number_lowers_support():
    faithful = support_score(KNOWLEDGE, "He recorded at Sun Records with Sam Phillips.")
    padded = support_score(KNOWLEDGE, "He recorded 48 songs at Sun Records with Sam Phillips.")
    assert faithful > padded


SONGS = (
    "Hound Dog is a twelve-bar blues song written by Jerry Leiber and Mike Stoller. It was first "
    "recorded by Big Mama Thornton in 1952. The song sold millions of copies. Love Me Tender is a "
    "1956 western film directed by Robert D. Webb. It starred Richard Egan and Debra Paget."
)


@pytest.mark.parametrize(
    ("right", "swapped"),
    [
        ("Hound Dog was written by Jerry Leiber.", "Hound Dog was written by Robert Webb."),
        (
            "Thornton first recorded Hound Dog in 1952.",
            "Thornton first recorded Hound Dog in 1956.",
        ),
        (
            "Love Me Tender was directed by Robert Webb.",
            "Love Me Tender was directed by Mike Stoller.",
        ),
    ],
)
def test_an_entity_moved_from_elsewhere_in_the_knowledge_ranks_lower(right, swapped):
    # Every word of the swapped reply is in the knowledge: only locality and word order differ.
    assert features(SONGS, swapped).coverage == 1.0
    assert features(SONGS, swapped).local < features(SONGS, right).local
    assert support_score(SONGS, right) > support_score(SONGS, swapped)


def test_questions_and_personal_opinions_are_not_supported_statements():
    assert features(KNOWLEDGE, "Do you like Elvis?").question == 1.0
    assert features(KNOWLEDGE, "I love his music, my mom does too.").personal == 1.0
    statement = support_score(KNOWLEDGE, "Elvis was an American singer.")
    assert support_score(KNOWLEDGE, "I think Elvis was an American singer?") < statement


def test_history_echoes_count_half_and_ignored_words_not_at_all():
    alone = support_score(KNOWLEDGE, "Elvis loved peanut butter sandwiches.")
    echoed = support_score(
        KNOWLEDGE, "Elvis loved peanut butter sandwiches.", "He ate peanut butter sandwiches."
    )
    assert echoed > alone
    voiced = features(KNOWLEDGE, "We think Elvis was a singer.", ignore=("we think",))
    assert voiced.personal == 0.0
    assert voiced.coverage == 1.0


def test_sentence_scores_score_each_sentence():
    scores = sentence_scores(
        KNOWLEDGE, "Elvis was an American singer and actor. He owned eleven pink cadillacs!"
    )
    assert [s for s, _ in scores] == [
        "Elvis was an American singer and actor.",
        "He owned eleven pink cadillacs!",
    ]
    assert scores[0][1] > UNGROUNDED_THRESHOLD > scores[1][1]


def test_tokens_normalise_numbers_currencies_and_days():
    assert tokens("Two cleans: €80.00, 45 mins, Mondays 08:30") == [
        "2",
        "cleans",
        "eur",
        "80",
        "45",
        "min",
        "mon",
        "8",
        "30",
    ]


def test_the_model_has_few_fixed_features():
    assert set(COEFFICIENTS) == {"coverage", "novel", "local", "bigram", "question", "personal"}


def test_baseline_is_the_share_of_content_words_found():
    assert baseline_support("the cat sat on the mat", "The cat sat.") == 1.0
    assert baseline_support("the cat sat on the mat", "The dog sat.") == 0.5
    assert baseline_support("anything", "It is.") == 1.0


# --------------------------------------------------------------------------- metrics


def test_auroc_of_perfect_reversed_and_tied_rankings():
    labels = [False, False, True, True]
    assert auroc([0.1, 0.2, 0.8, 0.9], labels) == 1.0
    assert auroc([0.9, 0.8, 0.2, 0.1], labels) == 0.0
    assert auroc([0.5, 0.5, 0.5, 0.5], labels) == 0.5
    # One tie across the classes counts half: 3 of 4 pairs right + 0.5 = 0.875.
    assert auroc([0.1, 0.6, 0.6, 0.9], labels) == pytest.approx(0.875)


def test_auroc_needs_both_classes():
    with pytest.raises(ValueError):
        auroc([0.1, 0.2], [True, True])


def test_confusion_metrics():
    c = confusion([True, True, False, False, True], [True, False, False, True, True])
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 1, 1)
    assert c.precision == pytest.approx(2 / 3)
    assert c.recall == pytest.approx(2 / 3)
    assert c.f1 == pytest.approx(2 / 3)
    assert c.balanced_accuracy == pytest.approx((2 / 3 + 1 / 2) / 2)


# --------------------------------------------------------------------------- the check


def test_it_flags_an_invented_sentence_and_not_a_grounded_one():
    reply = (
        "A hygiene clean costs 80 EUR and takes 45 minutes. "
        "We also have free underground parking for all patients."
    )
    case, findings = _check([("How much is a clean, and can I park?", reply)])
    assert len(findings) == 1
    finding = findings[0]
    assert finding.rule_id == "ungrounded_sentence"
    assert finding.severity == "minor"
    assert finding.effort == "M"
    assert finding.turn_index == 0
    assert finding.evidence[0].quote == "We also have free underground parking for all patients."
    assert all(quote_is_in_source(case, e) for e in finding.evidence)
    assert 0.5 <= finding.confidence <= 1.0


def test_one_finding_per_reply_quotes_its_least_supported_sentence():
    reply = (
        "We also have free underground parking for all patients. "
        "Our dentists studied in Vienna and speak seven languages fluently."
    )
    _, findings = _check([("can I park? who are the dentists?", reply)])
    assert len(findings) == 1
    assert findings[0].evidence[0].quote in reply


def test_a_sentence_the_kb_partly_supports_counts_as_ungrounded_but_is_not_reported():
    # Chatty bots paraphrase: below the calibrated threshold (the groundedness score counts
    # it), above the one a finding needs.
    reply = "Hygiene cleans are 80 EUR and take 45 minutes, and many patients book two a year."
    case, findings = _check([("How much is a clean?", reply)])
    [scored] = score_replies(case)
    assert FINDING_THRESHOLD <= scored.support < UNGROUNDED_THRESHOLD and not scored.misbound
    assert findings == []


def test_it_flags_a_price_taken_from_another_service():
    _, findings = _check([("How much is whitening?", "Teeth whitening costs 80 EUR.")])
    assert [f.evidence[0].quote for f in findings] == ["Teeth whitening costs 80 EUR."]
    assert "80" in findings[0].rationale
    _, right = _check([("How much is whitening?", "Teeth whitening costs 350 EUR.")])
    assert right == []


def test_it_skips_greetings_questions_refusals_and_intake():
    replies = [
        "Hello, thanks for getting in touch! How can I help you today?",
        "I'm sorry, I can't give medical advice over chat.",
        "Could you tell me your full name and phone number?",
        "Thank you, Mary. I have passed on your booking request for Tuesday.",
        "Your booking is confirmed, see you soon!",
    ]
    _, findings = _check([("hi", reply) for reply in replies])
    assert findings == []


def test_a_figure_answering_the_customers_question_must_belong_to_its_subject():
    _, wrong = _check([("How much is teeth whitening?", "It's 80 EUR.")])
    assert [f.evidence[0].quote for f in wrong] == ["It's 80 EUR."]
    _, right = _check([("How much is teeth whitening?", "It's 350 EUR.")])
    assert right == []


def test_an_invented_clause_is_caught_inside_a_sentence():
    reply = "A hygiene clean is 80 EUR; we also have free valet parking for every patient."
    case, findings = _check([("Price of a clean?", reply)])
    assert [f.evidence[0].quote for f in findings] == [reply]
    assert all(quote_is_in_source(case, e) for f in findings for e in f.evidence)


def test_the_customers_own_details_may_be_repeated():
    reply = "Reception will confirm by phone on 087 123 4567 within one working day."
    _, findings = _check([("My number is 087 123 4567, can I book a clean?", reply)])
    assert findings == []


def test_a_refusal_with_its_routing_is_not_a_claim():
    reply = "We cannot recommend painkillers here; the dentist will advise you at your visit."
    _, findings = _check([("What should I take for the pain?", reply)])
    assert findings == []


def test_quotes_are_verbatim_even_across_abbreviations():
    reply = "Hi! You would see Dr. Michael Hughes, our implant specialist from Cork.  Okay?"
    case, findings = _check([("Who is the dentist?", reply)])
    assert [f.evidence[0].quote for f in findings] == [
        "You would see Dr. Michael Hughes, our implant specialist from Cork."
    ]
    assert all(quote_is_in_source(case, e) for f in findings for e in f.evidence)


def test_reply_sentences_keep_exact_spans():
    reply = "See Dr. Brennan.\nOpen e.g. on Saturday. Bye!"
    for sentence in reply_sentences(reply):
        assert reply[sentence.start : sentence.end] == sentence.text
    assert [s.text for s in reply_sentences(reply)] == [
        "See Dr. Brennan.",
        "Open e.g. on Saturday.",
        "Bye!",
    ]


def test_claims_drop_framing():
    assert claim_of("Here is what our information says: Saturday: 09:00 to 13:00.") == (
        "Saturday: 09:00 to 13:00."
    )
    assert claim_of("Unfortunately, there is no parking at the practice.") == (
        "there is no parking at the practice."
    )
    assert claim_of("Is there parking?") is None
    assert claim_of("Great!") is None


def test_the_customer_may_be_echoed_but_not_confirmed_blindly():
    _, echoed = _check(
        [("Are you open on Saturday?", "On Saturday we are open from 09:00 to 13:00.")]
    )
    assert echoed == []
    _, confirmed = _check([("Do you do Invisalign braces?", "Yes, we do Invisalign braces.")])
    assert len(confirmed) == 1


def test_the_passage_index_is_cached_per_fixture_text():
    assert passage_index(KB) is passage_index(KB)
    index = passage_index(KB)
    assert "Hygiene clean" in index.top("hygiene clean price")[0]


def test_scores_cover_only_substantive_sentences():
    case = make_case(
        [("Hi", "Hello! The closest car park is on Tara Street. What can I do for you?")],
        fixture_text=KB,
    )
    scored = score_replies(case)
    assert [s.quote for s in scored] == ["The closest car park is on Tara Street."]
    assert scored[0].support > UNGROUNDED_THRESHOLD


# --------------------------------------------------------------------------- labelled examples


def _example_files() -> list[Path]:
    return sorted(EXAMPLES.glob("*/*.json"))


def test_there_are_enough_labelled_examples():
    kinds = [p.parent.name for p in _example_files()]
    assert kinds.count("positive") >= 5
    assert kinds.count("negative") >= 5


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_labelled_example_holds(path: Path):
    example = json.loads(path.read_text("utf-8"))
    assert example["check"] == "ungrounded_sentence"
    assert example["type"] == path.parent.name
    assert example["expectedResult"] is (example["type"] == "positive")
    conversation = example["conversation"]
    turns = [
        (customer["content"], reply["content"])
        for customer, reply in zip(conversation[::2], conversation[1::2], strict=True)
    ]
    assert all(m["role"] == "customer" for m in conversation[::2])
    case = make_case(turns, fixture_text=example["kb"])
    findings = Groundedness().run(case, demo_manifest(), make_config())
    assert bool(findings) is example["expectedResult"], [f.evidence[0].quote for f in findings]
    assert all(quote_is_in_source(case, e) for f in findings for e in f.evidence)


def test_hedges_disclaimers_and_questions_back_are_not_evidence_of_invention():
    from judge.support import UNGROUNDED_THRESHOLD, support_score

    knowledge = (
        "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was designed by Gustave "
        "Eiffel's company and completed in 1889 for the World's Fair."
    )
    claim = "it was completed in 1889 for the World's Fair"
    faithful = [
        f"I'm not sure, but {claim}.",
        f"I don't have personal experiences, but {claim}.",
        f"Did you know that {claim}?",
        f"{claim[0].upper()}{claim[1:]}. Have you ever been there?",
    ]
    for response in faithful:
        assert support_score(knowledge, response) >= UNGROUNDED_THRESHOLD, response
    invented = [
        f"I love it, I go there every summer with my family. {claim[0].upper()}{claim[1:]}.",
        "I'm not sure, but it was painted gold in 1999 for the Olympics.",
        "Have you ever seen its famous underground casino that opened in 1950?",
    ]
    for response in invented:
        assert support_score(knowledge, response) < UNGROUNDED_THRESHOLD, response


@pytest.mark.parametrize(
    "sentence",
    [
        "Oh no, that's so frustrating!",
        "I hope it arrives soon, and sorry again for the wait.",
        "Congratulations on the move, how exciting!",
        "Got them, thanks.",
        "You're very welcome!",
        "You have the following options:",  # a heading
        "Drop-off: Manchester, Sunday",  # a label read back
    ],
)
def test_rapport_headings_and_readback_labels_state_no_claim(sentence):
    assert claim_of(sentence) is None


def test_a_claim_after_rapport_or_in_a_long_label_is_still_a_claim():
    long = "Oh no, we are closed on Sundays but the Main Street branch opens at nine every morning."
    assert claim_of(long) == long
    label = "Parking: free underground parking right next to the practice for all patients."
    assert claim_of(label) == label
