"""Adversarial bot replies for the judge's speed tests (issue 33): long runs of one character
class, whitespace alternating with role markers, and single tokens of 200 KB; and a timer of
one check's CPU seconds on one of them."""

from __future__ import annotations

import time

from hypothesis import strategies as st

from generator.schemas import Manifest
from judge.checks.base import Check
from judge.schemas import CaseTranscript, JudgeConfig
from tests.judge.factories import make_case

# One character class per run: newlines, spaces, tabs, letters, digits and the punctuation the
# judge's patterns read around (emails, URLs, markdown, quotes).
RUN_UNITS = ["\n", " ", "\t", "a", "7", "@", ".", "-", "*", "#", ">", "\n ", "1.", "a.", "€5"]
MARKERS = ["\nsystem:", "assistant:", "[0] customer:", "<!--", "<p ", "judge:", "** "]
WHITESPACE = ["\n", " ", "\t", "\n\n", " \n"]
TOKEN_CHARS = ["a", "7", "a.", "a-", "a@", "1,"]


def replies(*, max_run: int, token_chars: int) -> st.SearchStrategy[str]:
    """A run of one unit up to `max_run` characters; whitespace and markers alternating (as
    long); or one token of `token_chars` (letters, digits, dotted, dashed, with "@"...)."""
    runs = st.builds(
        lambda unit, n: unit * max(1, n // len(unit)),
        st.sampled_from(RUN_UNITS),
        st.integers(1_000, max_run),
    )
    alternations = st.builds(
        lambda pairs, n: "".join(w * 8 + m for w, m in pairs) * max(1, n // 120),
        st.lists(st.tuples(st.sampled_from(WHITESPACE), st.sampled_from(MARKERS)), min_size=1),
        st.integers(1_000, max_run),
    )
    tokens = st.builds(
        lambda unit, tail: (unit * (token_chars // len(unit)))[:token_chars] + tail,
        st.sampled_from(TOKEN_CHARS),
        st.sampled_from(["", "@x.ie", " mg", ".com"]),
    )
    return st.one_of(runs, alternations, tokens)


def hostile_case(reply: str) -> CaseTranscript:
    """One turn: an ordinary question, the hostile reply."""
    return make_case([("Hi, how much is a hygiene clean? Can I book Tuesday?", reply)])


def check_seconds(
    check: Check, case: CaseTranscript, manifest: Manifest, config: JudgeConfig
) -> float:
    """CPU seconds of one run of `check` on `case` (this thread's, not the wall clock)."""
    started = time.thread_time()
    check.run(case, manifest, config)
    return time.thread_time() - started
