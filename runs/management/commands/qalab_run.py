"""`manage.py qalab_run`: start a run from the command line (CI) and gate on its verdict."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from qalab.database import require_migrated
from qalab.models import Organization
from runs import services
from runs.events import run_events
from runs.inline import InlineDeadline, InlineDispatcher
from runs.models import Run, RunStatus, Verdict
from runs.presets import PRESETS
from runs.report.build import report_build
from runs.report.junit import report_to_junit
from runs.report.markdown import (
    fallback_summary,
    judge_limits_summary,
    report_to_markdown,
    tokens_summary,
)
from runs.report.schema import RunReport
from runs.report.step_summary import report_to_step_summary
from runs.report.trials import trials_line
from runs.report.words import delta_summary
from runs.tasks import CeleryDispatcher

EXIT_PASS, EXIT_CRITICAL, EXIT_USAGE, EXIT_BUDGET, EXIT_ERROR = 0, 1, 2, 3, 4
# With --fail-on-regression: the delta on the same test set is a significant regression.
EXIT_REGRESSION = 5


HEARTBEAT_SECONDS = 10.0
WAIT_TIMEOUT = 1800  # seconds --wait waits when --timeout is not given


class Heartbeat:
    """Progress lines for a terminal or a CI log: each stage as it starts, and a "still ..."
    line whenever nothing was said for HEARTBEAT_SECONDS (a long generation or judging stage
    against a slow model would otherwise look hung)."""

    def __init__(self, write: Any, every: float = HEARTBEAT_SECONDS) -> None:
        self._write, self._every = write, every
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stage = "starting"
        self._started = self._said = time.monotonic()
        self._thread = threading.Thread(target=self._beat, name="qalab-heartbeat", daemon=True)

    def say(self, line: str) -> None:
        with self._lock:
            self._write(line)
            self._stage, self._said = line.strip(), time.monotonic()

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self._every)):
            with self._lock:
                now = time.monotonic()
                if now - self._said >= self._every:
                    self._write(f"  still {self._stage} · {now - self._started:.0f} s")
                    self._said = now

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


class RunFinished(CommandError):
    """The run ended; its exit code tells the gate how. The summary is printed already, so on
    the command line it exits quietly with the code (a verdict is not a crash); callers of
    `call_command` get it as a CommandError with `returncode`."""


def exit_code_for(run: Run) -> int:
    """0 pass (clean or with findings), 1 FAIL_CRITICAL, 3 BUDGET_STOPPED, 4 error/unfinished."""
    if run.verdict == Verdict.FAIL_CRITICAL:
        return EXIT_CRITICAL
    if run.verdict == Verdict.BUDGET_STOPPED:
        return EXIT_BUDGET
    if run.status == RunStatus.DONE and run.verdict in (
        Verdict.PASS_CLEAN,
        Verdict.PASS_WITH_FINDINGS,
    ):
        return EXIT_PASS
    return EXIT_ERROR


def regressed(report: RunReport) -> bool:
    """The delta played the same test set and the change is a significant regression."""
    delta = report.delta
    return delta is not None and delta.significance.change == "regressed"


def write_reports(
    run: Run, *, json_path: str | None, md_path: str | None, junit_path: str | None = None
) -> RunReport:
    report = report_build(run=run)
    if json_path:
        text = json.dumps(report.to_json(), indent=2, default=str)
        Path(json_path).write_text(text, encoding="utf-8")
    if md_path:
        Path(md_path).write_text(report_to_markdown(report), encoding="utf-8")
    if junit_path:
        Path(junit_path).write_text(report_to_junit(report), encoding="utf-8")
    return report


def append_step_summary(report: RunReport) -> str | None:
    """Append the compact summary to the file $GITHUB_STEP_SUMMARY names, if it is set.
    Returns why it could not (None: written, or nothing to do); never raises for the file."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(report_to_step_summary(report) + "\n")
    except OSError as exc:
        return f"could not append the summary to $GITHUB_STEP_SUMMARY ({path}): {exc}"
    return None


def _positive(value: str) -> int:
    import argparse

    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} must be >= 1")
    return number


def _unwritable(path: str) -> str | None:
    """Why a report cannot be written at `path` (None: it can)."""
    target = Path(path)
    if target.is_dir():
        return "is a folder, not a file"
    folder = target.parent
    if not folder.is_dir():
        return f"folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        return "is not writable"
    return None


def _iso_day(value: str) -> date:
    import argparse

    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a date in the form YYYY-MM-DD"
        ) from None


class Command(BaseCommand):
    help = (
        "Run the QA pipeline for one organization. Exit codes: 0 pass, 1 FAIL_CRITICAL, "
        "3 BUDGET_STOPPED, 4 error or timeout, 2 bad usage, 5 a significant regression "
        "(with --fail-on-regression)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument(
            "--fail-on-regression",
            action="store_true",
            help="exit 5 when the delta against the baseline, on the same test set, is a "
            "significant regression (paired test), whatever the verdict",
        )
        parser.add_argument("--preset", choices=sorted(PRESETS), default="quick")
        parser.add_argument(
            "--scenarios", type=_positive, help="override the preset's scenario count"
        )
        parser.add_argument("--max-turns", type=_positive, help="override the preset's turn cap")
        parser.add_argument(
            "--budget",
            type=_positive,
            help="override the token budget of the lab's roles (generator, simulator, judge)",
        )
        parser.add_argument(
            "--responder-budget",
            type=_positive,
            help="the bot's own token budget when the lab runs the bot (openai-chat:, reference; "
            "default: QALAB_RESPONDER_TOKEN_BUDGET, else the preset's budget)",
        )
        parser.add_argument(
            "--trials",
            type=_positive,
            default=1,
            metavar="K",
            help="play every scenario K times against the bot with the same customer plan "
            "(pass rate, pass^k, pass@k per scenario; findings in some trials only are flaky). "
            "Both budgets scale with K unless --budget / --responder-budget are given",
        )
        parser.add_argument("--seed", type=int, help="generation seed (default: random, recorded)")
        parser.add_argument(
            "--as-of",
            type=_iso_day,
            metavar="YYYY-MM-DD",
            help="the run's reference date, which scenario dates count from (default: today, "
            "UTC; recorded). Pin it with --seed for identical artifacts on any day",
        )
        parser.add_argument(
            "--responder", help="responder spec (default: the org's, else reference)"
        )
        parser.add_argument(
            "--reuse-artifacts",
            type=int,
            metavar="RUN_ID",
            help="reuse fixtures, manifest and scenarios of an earlier run",
        )
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--inline", action="store_true", help="run in this process, no broker")
        mode.add_argument("--wait", action="store_true", help="enqueue, then wait for the workers")
        parser.add_argument(
            "--timeout",
            type=_positive,
            help=f"seconds the run may take (--wait: default {WAIT_TIMEOUT}; --inline: none "
            "unless given): past them it ends as a timeout, exit 4",
        )
        parser.add_argument("--json", dest="json_path", help="write the JSON report here")
        parser.add_argument("--md", dest="md_path", help="write the Markdown report here")
        parser.add_argument(
            "--junit",
            dest="junit_path",
            help="write a JUnit XML report here (one testcase per case), for CI dashboards",
        )

    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except RunFinished as finished:
            if getattr(self, "_called_from_command_line", False):
                sys.exit(finished.returncode)
            raise

    def handle(self, *args: Any, **opts: Any) -> None:
        require_migrated()
        for option in ("json_path", "md_path", "junit_path"):
            if opts[option] and (problem := _unwritable(opts[option])):
                # Checked first: a whole run must not end in a report that cannot be written.
                flag = "--" + option.removesuffix("_path")
                raise CommandError(f"{flag} {opts[option]}: {problem}", returncode=EXIT_USAGE)
        try:
            org = Organization.objects.get(slug=opts["org"])
        except Organization.DoesNotExist:
            known = ", ".join(Organization.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(
                f"unknown organization {opts['org']!r} (known: {known}); "
                "import one with qalab_import_org or qalab_seed_demo",
                returncode=EXIT_USAGE,
            ) from None
        try:
            run = services.run_create(
                organization=org,
                preset=opts["preset"],
                responder_spec=opts["responder"],
                scenarios=opts["scenarios"],
                max_turns=opts["max_turns"],
                budget=opts["budget"],
                responder_budget=opts["responder_budget"],
                trials=opts["trials"],
                seed=opts["seed"],
                reuse_artifacts=opts["reuse_artifacts"],
                as_of=opts["as_of"],
            )
        except ValueError as exc:
            raise CommandError(str(exc), returncode=EXIT_USAGE) from exc
        self.stderr.write(
            f"Run {run.id}: {org.slug} · {run.preset} · {run.config['scenarios']} scenarios"
            + (f" × {run.trials} trials" if run.trials > 1 else "")
            + " · "
            f"budget {run.token_budget:,} tokens (bot {run.responder_token_budget:,}) · "
            f"engine {run.engine} · responder {run.responder_spec}"
        )

        if opts["inline"]:
            deadline = InlineDeadline(run.id, opts["timeout"])
            with Heartbeat(self.stderr.write) as heartbeat, deadline:
                dispatcher = InlineDispatcher(
                    progress=lambda step: heartbeat.say(f"  {step}"), stop=deadline.expired
                )
                services.run_start(run=run, dispatcher=dispatcher)
                dispatcher.drain()
            deadline.settle()
        else:
            with transaction.atomic():
                services.run_start(run=run, dispatcher=CeleryDispatcher())
            if not opts["wait"]:
                self.stdout.write(f"Run {run.id} queued; follow it in the admin or with --wait.")
                return
            timeout = opts["timeout"] or WAIT_TIMEOUT
            if not self._wait(run, timeout=timeout):
                run.refresh_from_db()
                self._write_outputs(run, opts)
                raise CommandError(
                    f"run {run.id} did not finish within {timeout}s (status {run.status}); "
                    "is a worker running?",
                    returncode=EXIT_ERROR,
                )

        run.refresh_from_db()
        report = self._write_outputs(run, opts)
        self._summary(report)
        code = exit_code_for(run)
        if opts["fail_on_regression"] and code != EXIT_ERROR and regressed(report):
            code = EXIT_REGRESSION
        if code != EXIT_PASS:
            raise RunFinished(
                f"run {run.id} ended {run.verdict or run.status}"
                + (f": {run.error}" if run.error else ""),
                returncode=code,
            )

    def _write_outputs(self, run: Run, opts: dict[str, Any]) -> RunReport:
        """The report files asked for, and the CI step summary when $GITHUB_STEP_SUMMARY is set
        (a summary that cannot be written is a warning, never the run's failure)."""
        report = write_reports(
            run, json_path=opts["json_path"], md_path=opts["md_path"], junit_path=opts["junit_path"]
        )
        if problem := append_step_summary(report):
            self.stderr.write(f"warning: {problem}")
        return report

    def _wait(self, run: Run, *, timeout: int) -> bool:
        """Wait until the run is final (True) or `timeout` seconds pass (False), with a progress
        line on every change seen and at least every HEARTBEAT_SECONDS. It re-reads the run
        when the workers signal a change (Postgres LISTEN/NOTIFY, `runs.events`) or a
        heartbeat is due; without notifications (SQLite) every `events.POLL_SECONDS`."""
        started = time.monotonic()
        deadline = started + timeout
        last, said = "", 0.0
        with run_events(run.id) as events:  # listening before the first read: nothing missed
            while time.monotonic() < deadline:
                run.refresh_from_db()
                done = run.cases.exclude(status__in=("queued", "running")).count()
                state = (
                    f"{run.status} · cases {done}/{run.cases.count()} · tokens {run.tokens_used:,}"
                    + (f" · bot {bot:,}" if (bot := run.responder_tokens_used) else "")
                )
                now = time.monotonic()
                if state != last or now - said >= HEARTBEAT_SECONDS:  # never silent for long
                    self.stderr.write(f"  {state} · {now - started:.0f} s")
                    last, said = state, now
                if run.is_final:
                    return True
                events.wait(max(0.0, min(said + HEARTBEAT_SECONDS, deadline) - now))
        return False

    def _summary(self, report: RunReport) -> None:
        s, t, sc = report.summary, report.tokens, report.scores
        overall = "n/a" if sc.overall is None else f"{sc.overall * 100:.1f}%"
        self.stdout.write(
            f"Run {report.run_id}: {report.verdict or report.status} — "
            f"{report.verdict_reason or report.error or ''}\n"
            + (f"  {report.bot_not_called}\n" if report.bot_not_called else "")
            + f"  cases {s.completed}/{s.cases} completed, {s.passed} passed · findings "
            f"{s.findings.critical} critical, {s.findings.major} major, "
            f"{s.findings.minor} minor · overall {overall} · {tokens_summary(t)}"
            + (f"\n  trials: {trials_line(report.trials)}" if report.trials else "")
            + f"\n  delta: {delta_summary(report)}"
            + (f"\n  fallbacks: {fallback}" if (fallback := fallback_summary(report)) else "")
            + (f"\n  judge limits: {lim}" if (lim := judge_limits_summary(report)) else "")
        )
