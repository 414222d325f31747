"""What the judge did not read or check is in the report (issue 33): a run against a bot that
replies up to a megabyte of adversarial text finishes, is judged in bounded CPU, and every
output (JSON, Markdown, report page, CLI summary) names the turns judged on a prefix
(QALAB_JUDGE_MAX_CHARS) and the checks a judging deadline skipped (QALAB_JUDGE_DEADLINE_S)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.urls import reverse

from judge.checks import REGISTRY
from qalab.models import Organization
from runs.models import Run, RunStatus
from runs.report.build import report_build
from runs.report.markdown import report_to_markdown
from tests.judge.hostile import MARKERS, WHITESPACE
from tests.responder_server import ResponderServer
from tests.runs.helpers import qalab_run

# Each under the 1 MB reply cap once JSON-encoded (a newline is two bytes there).
_ALTERNATION = "".join(w * 8 + m for w, m in zip(WHITESPACE * 2, MARKERS, strict=False))
HOSTILE = [
    "\n" * 480_000,  # a run of newlines
    "a" * 990_000,  # one long token
    _ALTERNATION * (950_000 // len(json.dumps(_ALTERNATION))),  # whitespace and role markers
    "1," * 490_000,  # the input unsupported_facts was slowest on
]
# CPU seconds of this thread for a whole inline run of 3 cases x 2 turns: generation,
# simulation (the bot is another thread), judging and the report. Measured ~5 s; before the
# cap, judging read every megabyte (a case's checks alone took over 20 s).
GENEROUS_CPU_S = 60.0


def hostile_reply(body: dict[str, Any]) -> dict[str, Any]:
    turn = sum(m["role"] == "assistant" for m in body["messages"])
    case = sum(map(ord, body["session_id"]))  # a different text per case, the same every run
    return {
        "reply": HOSTILE[(case + turn) % len(HOSTILE)],
        "extracted": {},
        "status": "AWAITING_RESPONSE",
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def _cli_summary(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("qalab_run", *args, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


def test_a_run_against_a_bot_replying_hostile_text_finishes_and_says_what_was_cut(
    demo_org: Organization, tmp_path: Path
) -> None:
    with ResponderServer(reply=hostile_reply) as bot:
        started = time.thread_time()
        code, report = qalab_run(
            "--org", "demo", "--inline", "--scenarios", "3", "--max-turns", "2",
            "--seed", "5", "--responder", bot.url, tmp_path=tmp_path,
        )  # fmt: skip
        cpu = time.thread_time() - started
        sizes = [len(r["reply"]) for rs in bot.replies.values() for r in rs]
    assert report["status"] == RunStatus.DONE, report["error"]
    assert code in (0, 1), report["verdict"]
    assert cpu < GENEROUS_CPU_S, f"{cpu:.1f} s CPU"
    assert max(sizes) > 900_000
    played = [c for c in report["cases"] if c["turns"]]
    assert len(played) == 3 and all(c["status"] == "done" for c in played)
    for case in played:
        long_turns = [
            t["index"]
            for t in case["turns"]
            if len(t["reply"]) > 20_000 or len(t["customer"]) > 20_000
        ]
        assert case.get("truncated_turns", []) == long_turns
        assert "skipped_checks" not in case  # judged within its deadline
        # The transcript keeps what the bot said; the judge read its prefix only.
        assert any(len(t["reply"]) > 900_000 for t in case["turns"])
    run = Run.objects.get(id=report["run_id"])
    markdown = report_to_markdown(report_build(run=run))
    first = played[0]
    turns = ", ".join(str(t) for t in first["truncated_turns"])
    assert f"Judge limits: case {first['id']}: turn" in markdown
    assert f"{turns} judged on the first QALAB_JUDGE_MAX_CHARS characters" in markdown
    for case in run.cases.all():
        if case.turns.exists():
            assert case.truncated_turns and case.skipped_checks == []


@override_settings(QALAB_JUDGE_DEADLINE_S=1e-9)
def test_the_checks_a_judging_deadline_skipped_are_in_every_output(
    demo_org: Organization, tmp_path: Path, admin_client: Any
) -> None:
    _, out = _cli_summary(
        "--org", "demo", "--inline", "--scenarios", "1", "--seed", "5",
        "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == RunStatus.DONE, report["error"]
    (case,) = report["cases"]
    last_check = list(REGISTRY)[-1]
    # The case's own worker checked it when it ended; the judge stage reused that, with what
    # its deadline skipped (stored in the case_checks artifact, then on the case row).
    assert last_check in case["skipped_checks"]
    assert "truncated_turns" not in case
    run = Run.objects.get(id=report["run_id"])
    assert run.cases.get().skipped_checks == case["skipped_checks"]
    note = f"case {case['id']}: not checked by the judging deadline (QALAB_JUDGE_DEADLINE_S): "
    assert note + ", ".join(case["skipped_checks"]) in out  # the CLI summary
    assert note in report_to_markdown(report_build(run=run))
    page = admin_client.get(reverse("admin:runs_run_report", args=[run.pk])).content.decode()
    assert 'id="qa-judge-limits"' in page and note in page
