"""On Postgres, refuse any change to a locked run's rows at the database level (DESIGN §4)."""

from __future__ import annotations

from django.db import migrations

CHILD_TABLES = ("qa_run_artifacts", "qa_run_cases", "qa_run_findings", "qa_run_top_actions")

FORWARD = """
CREATE OR REPLACE FUNCTION qa_forbid_locked_run() RETURNS trigger AS $$
BEGIN
  IF OLD.locked_at IS NOT NULL THEN
    RAISE EXCEPTION USING MESSAGE = 'run ' || OLD.id || ' is locked: its rows are immutable', ERRCODE = 'P0001';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION qa_forbid_locked_child() RETURNS trigger AS $$
DECLARE
  rid bigint;
BEGIN
  IF TG_TABLE_NAME = 'qa_run_turns' THEN
    SELECT run_id INTO rid FROM qa_run_cases
      WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.case_id ELSE NEW.case_id END;
  ELSE
    rid := CASE WHEN TG_OP = 'DELETE' THEN OLD.run_id ELSE NEW.run_id END;
  END IF;
  IF EXISTS (SELECT 1 FROM qa_runs WHERE id = rid AND locked_at IS NOT NULL) THEN
    RAISE EXCEPTION USING MESSAGE = 'run ' || rid || ' is locked: its rows are immutable', ERRCODE = 'P0001';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER qa_runs_immutable BEFORE UPDATE OR DELETE ON qa_runs
  FOR EACH ROW EXECUTE FUNCTION qa_forbid_locked_run();
"""

CHILD_TRIGGER = """
CREATE TRIGGER {table}_immutable BEFORE INSERT OR UPDATE OR DELETE ON {table}
  FOR EACH ROW EXECUTE FUNCTION qa_forbid_locked_child();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS qa_runs_immutable ON qa_runs;
{drops}
DROP FUNCTION IF EXISTS qa_forbid_locked_child();
DROP FUNCTION IF EXISTS qa_forbid_locked_run();
"""

TABLES = (*CHILD_TABLES, "qa_run_turns")


def forward(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FORWARD)
    for table in TABLES:
        schema_editor.execute(CHILD_TRIGGER.format(table=table))


def backward(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    drops = "\n".join(f"DROP TRIGGER IF EXISTS {t}_immutable ON {t};" for t in TABLES)
    schema_editor.execute(BACKWARD.format(drops=drops))


class Migration(migrations.Migration):
    dependencies = [("runs", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
