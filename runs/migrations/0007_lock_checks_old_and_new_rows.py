"""Locked runs stay locked: a row can be neither moved into nor out of a locked run.

0002 checked only the NEW row's run, so `UPDATE ... SET run_id = <unlocked run>` took a row out
of a locked run, after which it could be edited or deleted. The child trigger now checks the
run of the OLD row and of the NEW row (for turns: the run of the OLD and the NEW case), and the
LLM-call ledger gets the same trigger (a run is locked only once none of its reservations is
open: see runs.services.common.run_lock_if_idle).
"""

from __future__ import annotations

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION qa_run_is_locked(rid bigint) RETURNS boolean AS $$
  SELECT EXISTS (SELECT 1 FROM qa_runs WHERE id = rid AND locked_at IS NOT NULL);
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION qa_case_run(cid bigint) RETURNS bigint AS $$
  SELECT run_id FROM qa_run_cases WHERE id = cid;
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION qa_forbid_locked_child() RETURNS trigger AS $$
DECLARE
  old_rid bigint;
  new_rid bigint;
BEGIN
  -- (a record's fields are resolved even in an untaken CASE branch: hence the IFs)
  IF TG_TABLE_NAME = 'qa_run_turns' THEN
    IF TG_OP <> 'INSERT' THEN old_rid := qa_case_run(OLD.case_id); END IF;
    IF TG_OP <> 'DELETE' THEN new_rid := qa_case_run(NEW.case_id); END IF;
  ELSE
    IF TG_OP <> 'INSERT' THEN old_rid := OLD.run_id; END IF;
    IF TG_OP <> 'DELETE' THEN new_rid := NEW.run_id; END IF;
  END IF;
  IF qa_run_is_locked(old_rid) THEN
    RAISE EXCEPTION USING MESSAGE = 'run ' || old_rid || ' is locked: its rows are immutable', ERRCODE = 'P0001';
  END IF;
  IF qa_run_is_locked(new_rid) THEN
    RAISE EXCEPTION USING MESSAGE = 'run ' || new_rid || ' is locked: its rows are immutable', ERRCODE = 'P0001';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER qa_llm_calls_immutable BEFORE INSERT OR UPDATE OR DELETE ON qa_llm_calls
  FOR EACH ROW EXECUTE FUNCTION qa_forbid_locked_child();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS qa_llm_calls_immutable ON qa_llm_calls;
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
DROP FUNCTION IF EXISTS qa_case_run(bigint);
DROP FUNCTION IF EXISTS qa_run_is_locked(bigint);
"""


def forward(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD)


def backward(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("runs", "0006_drop_dead_fields_artifact_kinds")]
    operations = [migrations.RunPython(forward, backward)]
