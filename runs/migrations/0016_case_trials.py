"""Trials (issue 34): a run may play each scenario K times, one case per trial. Existing cases
are trial 1, whose key stays the scenario's."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0015_run_responder_budget"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="runcase",
            options={"ordering": ["run", "scenario_key", "trial"]},
        ),
        migrations.RemoveConstraint(
            model_name="runcase",
            name="uniq_case_run_scenario",
        ),
        migrations.AddField(
            model_name="runcase",
            name="trial",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddConstraint(
            model_name="runcase",
            constraint=models.UniqueConstraint(
                fields=("run", "scenario_key", "trial"), name="uniq_case_run_scenario_trial"
            ),
        ),
    ]
