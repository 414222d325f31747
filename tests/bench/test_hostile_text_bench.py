"""`judge_hostile_check_s` (issue 33, acceptance 2): the most CPU seconds any one check takes on
an adversarial reply up to the 1 MB reply cap (long runs of one character class, whitespace
alternating with role markers, single tokens; `tests/judge/hostile.py`), target at most 0.5 s.
Each check reads the case as the judge does: cut to QALAB_JUDGE_MAX_CHARS characters per text
(`judge.engine.bound_case`, the default 20,000). `make test` runs the same fuzz with a generous
bound (`tests/judge/test_hostile_text.py`)."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from hypothesis import given, settings

from judge.checks import all_checks
from judge.engine import bound_case
from tests.bench.figures import record
from tests.judge.factories import demo_manifest, make_config
from tests.judge.hostile import check_seconds, hostile_case, replies

pytestmark = pytest.mark.slow

CHECK_S = 0.5
REPLY_CAP = 1_000_000  # characters: the simulator's reply cap is 1 MB
_worst: dict[str, tuple[float, str]] = {}


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(reply=replies(max_run=REPLY_CAP, token_chars=REPLY_CAP))
def _fuzz(reply: str) -> None:
    max_chars = django_settings.QALAB_JUDGE_MAX_CHARS
    manifest, config = demo_manifest(), make_config(semantic=False, max_chars=max_chars)
    case, _ = bound_case(hostile_case(reply), max_chars)
    for check in all_checks():
        seconds = check_seconds(check, case, manifest, config)
        if seconds > _worst.get(check.check_id, (0.0, ""))[0]:
            _worst[check.check_id] = (seconds, f"{len(reply):,} chars {reply[:12]!r}")


def test_no_check_takes_more_than_half_a_second_on_hostile_text() -> None:
    _fuzz()
    worst_id, (worst_s, worst_input) = max(_worst.items(), key=lambda item: item[1][0])
    record(
        "judge_hostile_check_s",
        round(worst_s, 3),
        target=CHECK_S,
        note=f"worst: {worst_id} on {worst_input}, read up to QALAB_JUDGE_MAX_CHARS",
    )
    record(
        "judge_hostile_by_check",
        {check_id: round(s, 3) for check_id, (s, _) in sorted(_worst.items())},
    )
    slow = {k: (round(s, 2), what) for k, (s, what) in _worst.items() if s > CHECK_S}
    assert not slow, f"checks over {CHECK_S} s CPU on hostile text: {slow}"
