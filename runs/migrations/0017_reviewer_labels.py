"""Reviewer labels (issue 36): missed findings added by hand, and semantic thresholds re-fitted
per organization."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qalab", "0004_intake_field_examples"),
        ("runs", "0016_case_trials"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="MissedFinding",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("turn_index", models.PositiveIntegerField()),
                ("rule_id", models.CharField(max_length=80)),
                ("other_text", models.CharField(blank=True, max_length=300)),
                (
                    "severity",
                    models.CharField(
                        choices=[("critical", "Critical"), ("major", "Major"), ("minor", "Minor")],
                        max_length=10,
                    ),
                ),
                ("quote", models.TextField()),
                ("note", models.TextField(blank=True)),
                ("fingerprint", models.CharField(db_index=True, max_length=64)),
                ("carried_from_run", models.PositiveIntegerField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "carried_from",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="runs.missedfinding",
                    ),
                ),
                (
                    "case",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="missed_findings",
                        to="runs.runcase",
                    ),
                ),
                (
                    "reviewer",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="missed_findings",
                        to="runs.run",
                    ),
                ),
            ],
            options={
                "db_table": "qa_missed_findings",
                "ordering": ["run", "id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("run", "fingerprint", "case"),
                        name="uniq_missed_run_fingerprint_case",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="OrgJudgeThreshold",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("rule_id", models.CharField(max_length=80)),
                ("threshold", models.FloatField()),
                ("provenance", models.JSONField(default=dict)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "organization",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judge_thresholds",
                        to="qalab.organization",
                    ),
                ),
            ],
            options={
                "db_table": "qa_org_judge_thresholds",
                "ordering": ["organization", "rule_id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("organization", "rule_id"), name="uniq_org_judge_threshold"
                    )
                ],
            },
        ),
    ]
