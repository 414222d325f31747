"""The bot's own budget and counters (issue 34): a run made before has 0 and its bot's tokens in
tokens_used; the ledger keeps charging those to the lab's counters."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0014_case_judge_limits"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="responder_token_budget",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="run",
            name="responder_tokens_reserved",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="run",
            name="responder_tokens_used",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
