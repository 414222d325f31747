"""The judge reads at most `JudgeConfig.max_chars` characters of each customer message, reply
and extracted value (issue 33, QALAB_JUDGE_MAX_CHARS): cut in one place (`bound_case`), so every
check, the evidence check and scoring read the same prefix, its quotes are verbatim in what was
said, and the judgement names the turns cut. Bounds are CPU seconds and generous; the strict
0.5 s per check is the bench's (tests/bench/test_hostile_text_bench.py)."""

from __future__ import annotations

import time

from judge.engine import bound_case, check_case, judge_case
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source
from tests.judge.hostile import hostile_case

MAX_CHARS = 20_000
GENEROUS_S = 5.0


def test_a_case_is_cut_to_prefixes_and_the_cut_turns_are_named() -> None:
    case = make_case(
        [
            ("How much is a hygiene clean?", "It is 60 EUR."),
            ("x" * 30_000, "Sure." + " \n" * 20_000),
            ("Thanks", "Bye"),
        ]
    )
    bounded, cut = bound_case(case, 1_000)
    assert cut == [1]
    for before, after in zip(case.turns, bounded.turns, strict=True):
        assert before.customer.startswith(after.customer) and len(after.customer) <= 1_000
        assert before.reply.startswith(after.reply) and len(after.reply) <= 1_000
    assert bounded.turns[0] == case.turns[0] and bounded.turns[2] == case.turns[2]
    assert bound_case(bounded, 1_000) == (bounded, [])  # cutting again changes nothing
    assert bound_case(case, None) == (case, [])
    short = make_case([("Hi", "Hello")])
    assert bound_case(short, 1_000)[0] is short


def test_a_1_mb_reply_is_judged_in_bounded_cpu_and_named_truncated() -> None:
    # Before: every check read the whole megabyte (unsupported_facts alone ~1.1 s per 200 KB of
    # "1,1,1,..."; all checks together well over GENEROUS_S).
    case = hostile_case("1," * 500_000)
    config = make_config(semantic=False, max_chars=MAX_CHARS)
    started = time.thread_time()
    judgement = judge_case(case, demo_manifest(), config=config)
    assert time.thread_time() - started < GENEROUS_S
    assert judgement.truncated_turns == [0]
    assert not judgement.skipped_checks


def test_findings_on_a_cut_reply_quote_what_was_said() -> None:
    reply = "A hygiene clean is 999 EUR and we are open on Sundays. " + "a" * 60_000
    case = make_case([("How much is a hygiene clean?", reply)])
    checked = check_case(case, demo_manifest(), make_config(semantic=False, max_chars=MAX_CHARS))
    assert checked.truncated_turns == [0]
    judgement = judge_case(
        case, demo_manifest(), config=make_config(semantic=False, max_chars=MAX_CHARS)
    )
    assert any("999" in f.subject for f in judgement.findings)
    for finding in judgement.findings:
        for evidence in finding.evidence:
            if evidence.source in ("reply", "customer", "extracted"):
                assert quote_is_in_source(case, evidence)  # the original, uncut case
