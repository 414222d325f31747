"""Run tables (DESIGN §4): written only through runs.services; immutable once a run is locked."""

from __future__ import annotations

import re
from datetime import date

from django.conf import settings
from django.db import models

from qalab.domain import SEVERITIES, ArtifactKind
from qalab.models import Organization


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    GENERATING = "generating"
    SIMULATING = "simulating"
    JUDGING = "judging"
    REPORTING = "reporting"
    DONE = "done"
    BUDGET_STOPPED = "budget_stopped"
    ERROR = "error"
    CANCELLED = "cancelled"


FINAL_STATUSES = (
    RunStatus.DONE,
    RunStatus.BUDGET_STOPPED,
    RunStatus.ERROR,
    RunStatus.CANCELLED,
)


class Verdict(models.TextChoices):
    FAIL_CRITICAL = "FAIL_CRITICAL"
    PASS_WITH_FINDINGS = "PASS_WITH_FINDINGS"
    PASS_CLEAN = "PASS_CLEAN"
    BUDGET_STOPPED = "BUDGET_STOPPED"


# The lab's own runs: `qalab_selftest` runs, runs against a canary responder (a bot with
# planted faults), and stand-in runs (an `openai-chat:` bot on the offline engine, which the
# reference bot stood in for: QALAB_OPENAI_CHAT_STAND_IN). They are not a real bot's results:
# lists, trends, baselines and triage carry-over leave them out.
CANARY_PREFIX = "canary:"
PURPOSE_SELFTEST = "selftest"
PURPOSE_STAND_IN = "stand-in"
LAB_PURPOSES = (PURPOSE_SELFTEST, PURPOSE_STAND_IN)
# What every format says of a stand-in run (JSON `bot_not_called`, Markdown, page, JUnit, CLI).
BOT_NOT_CALLED = (
    "The bot was not called: with QALAB_LLM_ENGINE=offline the lab's reference bot stood in "
    "for the openai-chat: model (QALAB_OPENAI_CHAT_STAND_IN). This run tests the lab, not the "
    "bot; it is not a real bot's result."
)


class RunQuerySet(models.QuerySet["Run"]):
    def of_real_bots(self) -> RunQuerySet:
        """Runs against a real responder: no selftest, canary or stand-in runs. A run recorded
        before runs had a purpose (no `source.purpose` key) is a real bot's: `exclude()` alone
        would drop it, as SQL's NOT(NULL IN (...)) is not true."""
        return self.exclude(responder_spec__startswith=CANARY_PREFIX).filter(
            models.Q(source__purpose__isnull=True) | ~models.Q(source__purpose__in=LAB_PURPOSES)
        )

    def of_side(self, *, lab: bool) -> RunQuerySet:
        """The lab's own runs with `lab`, else real bots' runs: what one side's triage, misses
        and accuracy figures read, never mixing the other's in."""
        return self.of_the_lab() if lab else self.of_real_bots()

    def of_the_lab(self) -> RunQuerySet:
        """The lab's own runs (the complement of `of_real_bots`): selftest, canary and stand-in
        runs."""
        return self.filter(
            models.Q(responder_spec__startswith=CANARY_PREFIX)
            | models.Q(source__purpose__in=LAB_PURPOSES)
        )


class Run(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="runs")
    preset = models.CharField(max_length=20)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED)
    stage_detail = models.CharField(max_length=300, blank=True)
    responder_spec = models.CharField(max_length=500)
    engine = models.CharField(max_length=20)
    models_used = models.JSONField(default=dict)
    seed = models.BigIntegerField()
    config = models.JSONField(default=dict)
    settings_hash = models.CharField(max_length=64)
    source = models.JSONField(default=dict)
    token_budget = models.PositiveIntegerField()
    tokens_used = models.PositiveIntegerField(default=0)
    tokens_reserved = models.PositiveIntegerField(default=0)
    # The bot's own tokens when the lab runs it (role `responder`: an `openai-chat:` bot, the
    # reference bot), metered apart from the lab's roles against their own budget (issue 34).
    # 0 on runs made before: their bot's tokens are in `tokens_used`.
    responder_token_budget = models.PositiveIntegerField(default=0)
    responder_tokens_used = models.PositiveIntegerField(default=0)
    responder_tokens_reserved = models.PositiveIntegerField(default=0)
    budget_exhausted = models.BooleanField(default=False)
    # PROTECT: a locked run cannot be changed, so its creator cannot be deleted (deactivate them).
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    locked_at = models.DateTimeField(null=True, blank=True)
    verdict = models.CharField(max_length=20, choices=Verdict.choices, blank=True)
    verdict_reason = models.CharField(max_length=300, blank=True)
    score_groundedness = models.FloatField(null=True, blank=True)
    score_extraction = models.FloatField(null=True, blank=True)
    score_quality = models.FloatField(null=True, blank=True)
    score_overall = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        db_table = "qa_runs"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "preset", "-id"], name="qa_runs_org_preset"),
            # The runs list's sparklines: the last runs of an organization + responder.
            models.Index(
                fields=["organization", "responder_spec", "-id"], name="qa_runs_org_responder"
            ),
        ]

    def __str__(self) -> str:
        return f"Run #{self.pk} · {self.organization.slug} · {self.preset}"

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def probe(self) -> str:
        """'selftest', 'stand-in' or 'canary' for the lab's own runs, '' for a real bot's."""
        if (purpose := self.source.get("purpose")) in LAB_PURPOSES:
            return str(purpose)
        return "canary" if self.responder_spec.startswith(CANARY_PREFIX) else ""

    @property
    def bot_called(self) -> bool:
        """False for a stand-in run: the lab's reference bot answered in place of the
        `openai-chat:` bot, which was never called."""
        return self.source.get("purpose") != PURPOSE_STAND_IN

    @property
    def bot_not_called(self) -> str:
        """Why the bot was not called, in the words every format uses ("": it was)."""
        return "" if self.bot_called else BOT_NOT_CALLED

    @property
    def trials(self) -> int:
        """How many times the run plays each scenario (`--trials K`; 1 on runs made before)."""
        return int(self.config.get("trials", 1))

    @property
    def as_of(self) -> date:
        """The run's reference date, the day its scenarios' dates count from: its snapshotted
        `as_of`, or (runs made before it was snapshotted) the day the run was created."""
        if as_of := self.config.get("as_of"):
            return date.fromisoformat(as_of)
        return self.created_at.date()

    @property
    def org_slug(self) -> str:
        """The organization's slug as it was when the run was created (its snapshot)."""
        return self.source.get("organization", {}).get("slug") or self.organization.slug

    @property
    def org_name(self) -> str:
        """The organization's name as it was when the run was created: a re-import that renames
        the organization does not rewrite the reports of its earlier runs."""
        return self.source.get("organization", {}).get("name") or self.organization.name


class RunArtifact(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    kind = models.CharField(max_length=30, choices=[(k.value, k.value) for k in ArtifactKind])
    key = models.CharField(max_length=100)
    content = models.TextField()
    sha256 = models.CharField(max_length=64)
    noise_level = models.CharField(max_length=20, blank=True)
    metrics = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "qa_run_artifacts"
        ordering = ["kind", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "kind", "key"], name="uniq_artifact_run_kind_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}"


class CaseStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    ERROR = "error"
    SKIPPED_BUDGET = "skipped_budget"
    # Never started: the run was cancelled while the case waited for a slot.
    CANCELLED = "cancelled"


PENDING_CASE_STATUSES = (CaseStatus.QUEUED, CaseStatus.RUNNING)

# A case's key names its scenario, and its trial when the run plays each scenario more than
# once (`--trials K`): trial 1 is the scenario's key ("sc-03"), a later one "sc-03.t2". So a
# run of one trial keeps the keys, sessions and report of a run made before trials existed.
TRIAL_MARK = ".t"
_TRIAL_KEY = re.compile(r"^(?P<scenario>.+)\.t(?P<trial>[2-9]|[1-9][0-9]+)$")


def case_key(scenario_key: str, trial: int) -> str:
    """The key of `scenario_key`'s trial `trial` (1-based)."""
    return scenario_key if trial == 1 else f"{scenario_key}{TRIAL_MARK}{trial}"


class RunCaseQuerySet(models.QuerySet["RunCase"]):
    def with_key(self, key: str) -> RunCaseQuerySet:
        """The case whose `key` is `key` (a scenario's key is its first trial)."""
        match = _TRIAL_KEY.match(key)
        q = models.Q(scenario_key=key, trial=1)
        if match:
            q |= models.Q(scenario_key=match["scenario"], trial=int(match["trial"]))
        return self.filter(q)


class RunCase(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="cases")
    scenario_key = models.CharField(max_length=50)
    # Which play of its scenario this case is (`--trials K`: 1..K, the same customer plan).
    trial = models.PositiveSmallIntegerField(default=1)
    scenario_type = models.CharField(max_length=50)
    fixture_key = models.CharField(max_length=50)
    status = models.CharField(max_length=20, choices=CaseStatus.choices, default=CaseStatus.QUEUED)
    expected_status = models.CharField(max_length=30)
    actual_status = models.CharField(max_length=30, blank=True)
    score_groundedness = models.FloatField(null=True, blank=True)
    score_extraction = models.FloatField(null=True, blank=True)
    score_quality = models.FloatField(null=True, blank=True)
    score_overall = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True)
    # Findings of the case dropped by the judge's evidence check (a quote or the subject not in
    # what it cites), by rule; the LLM review's own drops are in its `llm_review` artifact.
    unsupported_by_rule = models.JSONField(default=dict, blank=True)
    # What the judge left out of this case (issue 33): the checks (and "semantic") its judging
    # deadline skipped, and the turns judged on their first QALAB_JUDGE_MAX_CHARS characters.
    skipped_checks = models.JSONField(default=list, blank=True)
    truncated_turns = models.JSONField(default=list, blank=True)
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = RunCaseQuerySet.as_manager()

    class Meta:
        db_table = "qa_run_cases"
        ordering = ["run", "scenario_key", "trial"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "scenario_key", "trial"], name="uniq_case_run_scenario_trial"
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.scenario_type})"

    @property
    def key(self) -> str:
        """The case's id in the run: its scenario's key, with the trial after the first."""
        return case_key(self.scenario_key, self.trial)

    @property
    def session_id(self) -> str:
        """The responder session namespace of this case (seed 000 isolation): each trial talks
        in a session of its own."""
        return f"qalab-{self.run_id}-{self.key}"


class RunTurn(models.Model):
    case = models.ForeignKey(RunCase, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    attempt = models.PositiveIntegerField(default=1)
    customer_message = models.TextField()
    responder_reply = models.TextField()
    extracted = models.JSONField(default=dict, blank=True)
    responder_status = models.CharField(max_length=30, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "qa_run_turns"
        ordering = ["case", "index"]
        constraints = [
            models.UniqueConstraint(fields=["case", "index"], name="uniq_turn_case_index")
        ]

    def __str__(self) -> str:
        return f"turn {self.index} of {self.case_id}"


# The database's choices are the domain's severities, most severe first.
Severity = models.TextChoices("Severity", [(s.upper(), s) for s in SEVERITIES])


class RunFinding(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="findings")
    case = models.ForeignKey(
        RunCase, null=True, blank=True, on_delete=models.CASCADE, related_name="findings"
    )
    position = models.PositiveIntegerField()
    turn_index = models.PositiveIntegerField(null=True, blank=True)
    rule_id = models.CharField(max_length=80)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    subject = models.CharField(max_length=300, blank=True)
    evidence = models.JSONField(default=list)
    rationale = models.TextField()
    fix_target = models.CharField(max_length=20)
    fix_text = models.TextField()
    effort = models.CharField(max_length=2)
    confidence = models.FloatField()
    detector = models.CharField(max_length=80)
    fingerprint = models.CharField(max_length=64, db_index=True)
    confirmed = models.BooleanField(default=True)
    corroborating = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "qa_run_findings"
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="uniq_finding_run_position")
        ]

    def __str__(self) -> str:
        return f"{self.severity} {self.rule_id}"


class RunTopAction(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="top_actions")
    rank = models.PositiveSmallIntegerField()
    title = models.CharField(max_length=300)
    target_layer = models.CharField(max_length=20)
    effort = models.CharField(max_length=2)
    rationale = models.TextField()
    finding_ids = models.JSONField(default=list)

    class Meta:
        db_table = "qa_run_top_actions"
        ordering = ["run", "rank"]
        constraints = [models.UniqueConstraint(fields=["run", "rank"], name="uniq_action_run_rank")]

    def __str__(self) -> str:
        return f"#{self.rank} {self.title}"


class LlmCall(models.Model):
    """The LLM call ledger: one row per metered call, reserved then settled."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="llm_calls")
    role = models.CharField(max_length=20)
    purpose = models.CharField(max_length=200)
    attempt = models.PositiveIntegerField(default=1)
    reserved = models.PositiveIntegerField()
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    actual = models.PositiveIntegerField(null=True, blank=True)
    estimated = models.BooleanField(default=True)
    status = models.CharField(max_length=20, default="reserved")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # The model's reply exactly as received, stored before validation (DESIGN §6).
    raw_reply = models.TextField(blank=True)
    detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "qa_llm_calls"
        ordering = ["run", "id"]

    def __str__(self) -> str:
        return f"{self.role}/{self.purpose}"
