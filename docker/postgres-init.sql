-- Run once by the postgres image when the db volume is first created (docker-entrypoint-initdb.d),
-- as POSTGRES_USER, the owner role: it owns the database and, after
-- `manage.py migrate --database owner`, every table, trigger and function.
-- The app role below (DATABASE_URL of web, worker and beat) owns nothing: each migrate on the
-- owner grants it SELECT, INSERT, UPDATE, DELETE on the tables and USAGE, SELECT on the
-- sequences (qalab/db_roles.py), so it cannot truncate, disable or drop the lock triggers.
-- An existing volume skips this script: run it once by hand, e.g.
--   docker compose exec db psql -U qalab -d qalab -f /docker-entrypoint-initdb.d/10-qalab-app-role.sql
CREATE ROLE qalab_app LOGIN PASSWORD 'qalab_app' NOSUPERUSER NOCREATEDB NOCREATEROLE;
