"""Reviewers' tables (DESIGN §10): triage decisions, promoted fixtures, Start run tokens, missed
findings added by hand and per-organization judge thresholds. They live outside a run's
immutable rows: the database triggers that freeze a locked run (migration 0002) do not cover
them. `runs.models` imports them, where Django finds them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from qalab.models import Organization
from runs.models.run import Run, RunCase, RunFinding, Severity


class TriageState(models.TextChoices):
    OPEN = "open"
    CONFIRMED = "confirmed"
    FALSE_POSITIVE = "false_positive", "False positive"
    FIXED = "fixed"
    WONT_FIX = "wont_fix", "Won't fix"


# The decisions that may say "does not fail the gate" (`FindingTriage.gate_waived`).
GATE_WAIVABLE_STATES = (TriageState.WONT_FIX, TriageState.FALSE_POSITIVE)


class FindingTriage(models.Model):
    """One triage decision on a finding. Append-only: the newest row of a finding is its state,
    the older ones are its audit trail. A finding without a row is `open`.

    A row with `carried_from_run` was not made by hand: when a run's findings are stored, a
    finding whose fingerprint the organization triaged in an earlier run inherits that newest
    decision (state, note, reviewer, gate option), copied from the row `carried_from`.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="triage")
    finding = models.ForeignKey(RunFinding, on_delete=models.CASCADE, related_name="triage")
    state = models.CharField(max_length=20, choices=TriageState.choices)
    note = models.TextField(blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "Does not fail the gate" (won't fix / false positive only): a later run that carries this
    # decision does not count the finding toward FAIL_CRITICAL. Never this run's own verdict.
    gate_waived = models.BooleanField(default=False)
    # The run whose decision this row carries (an id, kept even if that run is deleted).
    carried_from_run = models.PositiveIntegerField(null=True, blank=True)
    carried_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "qa_finding_triage"
        ordering = ["finding", "-id"]
        indexes = [models.Index(fields=["run", "finding"], name="qa_triage_run_finding")]

    def __str__(self) -> str:
        return f"{self.finding_id}: {self.state}"


class PromotedFixture(models.Model):
    """A fixture written into QALAB_FIXTURES_DIR: who, when, where, and the hashes.

    One row per fixture content and organization, so a second promote of the same fixture
    (from this run or a re-run on the same test set) finds the file already written.
    """

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="promoted_fixtures"
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="promoted_fixtures")
    case_key = models.CharField(max_length=50)
    fixture_key = models.CharField(max_length=50)
    fixture_sha256 = models.CharField(max_length=64)
    path = models.CharField(max_length=1000)
    sha256 = models.CharField(max_length=64, help_text="of the written file")
    promoted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "qa_promoted_fixtures"
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "fixture_sha256"], name="uniq_promoted_fixture"
            )
        ]

    def __str__(self) -> str:
        return self.path


class RunStartToken(models.Model):
    """The one-time token of a Start run form, tied to the run it made: a second POST of the
    same form (a double click, a retried request) finds the run instead of making another.
    The unique token makes two simultaneous POSTs one run (`runs.services.create`)."""

    token = models.CharField(max_length=64, unique=True)
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="start_token")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "qa_run_start_tokens"

    def __str__(self) -> str:
        return f"{self.token[:8]}… → run {self.run_id}"


# A missed finding's rule when the catalog has none for it (its text says what was missed).
OTHER_RULE = "other"


class MissedFinding(models.Model):
    """A defect the judge missed, added by a reviewer on a turn of a (locked) run: the rule it
    falls under (a catalog rule, or `other` with `other_text`), its severity, a quote selected
    from the turn (verified verbatim when added), a note. Stored apart from the run's own rows,
    so the run stays locked and its verdict never changes; counted on the reviewer's side
    (runs.accuracy).

    A row with `carried_from` was not added by hand: a later run of the organization whose case
    of the same scenario still says the quote in a bot turn carries it (like triage)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="missed_findings")
    case = models.ForeignKey(RunCase, on_delete=models.CASCADE, related_name="missed_findings")
    turn_index = models.PositiveIntegerField()
    rule_id = models.CharField(max_length=80)
    other_text = models.CharField(max_length=300, blank=True)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    quote = models.TextField()
    note = models.TextField(blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The same defect across runs: the rule and the quote (judge.gate.fingerprint).
    fingerprint = models.CharField(max_length=64, db_index=True)
    carried_from_run = models.PositiveIntegerField(null=True, blank=True)
    carried_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "qa_missed_findings"
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "fingerprint", "case"], name="uniq_missed_run_fingerprint_case"
            )
        ]

    def __str__(self) -> str:
        return f"missed {self.severity} {self.rule_id} in run {self.run_id}"


class OrgJudgeThreshold(models.Model):
    """A semantic rule's threshold re-fitted for one organization on its reviewers' labels
    (`qalab_train_heads --from-triage ORG`, opt-in), with its provenance (labels, precision,
    when, by whom). A run snapshots it into its config when created, so a changed threshold
    shows in the delta's changed settings; runs of other organizations never read it."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="judge_thresholds"
    )
    rule_id = models.CharField(max_length=80)
    threshold = models.FloatField()
    provenance = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "qa_org_judge_thresholds"
        ordering = ["organization", "rule_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "rule_id"], name="uniq_org_judge_threshold"
            )
        ]

    def __str__(self) -> str:
        return f"{self.organization_id}: {self.rule_id} >= {self.threshold}"
