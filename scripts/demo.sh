#!/usr/bin/env bash
# Serve the demo: a Celery worker (with the embedded beat) in the background, the web server in front.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p var
# SIGTERM stops the worker within QALAB_WORKER_STOP_SECONDS (soft shutdown); a case it was
# playing is resumed by the next worker after its last written turn.
REMAP_SIGTERM=SIGQUIT .venv/bin/celery -A qalab.celery worker -B --concurrency 2 --loglevel INFO \
  --schedule var/celerybeat-schedule --logfile var/worker.log &
worker=$!
trap 'kill $worker 2>/dev/null || true; wait $worker 2>/dev/null || true' EXIT INT TERM
echo
echo "AI QA Lab demo: http://127.0.0.1:8000/admin/  (worker log: var/worker.log)"
cat var/demo-credentials.txt
echo "Press Ctrl-C to stop."
echo
.venv/bin/python manage.py runserver 127.0.0.1:8000 --noreload
