#!/usr/bin/env bash
# Install everything and serve Nimbus on the embedded defaults (offline model, SQLite in instance/).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
.venv/bin/flask --app webapp init-db --demo
# The worker runs background jobs (summaries, memory distillation) off the request path.
.venv/bin/huey_consumer webapp.worker.huey --workers 2 --worker-type thread --quiet &
worker=$!
trap 'kill $worker 2>/dev/null' EXIT
echo "Nimbus is at http://127.0.0.1:${PORT:-5000}/ (Ctrl+C stops it)"
# gevent workers hold many open SSE streams at once; the dev server is for debugging only.
.venv/bin/gunicorn --worker-class gevent --workers "${WEB_CONCURRENCY:-2}" \
    --bind "127.0.0.1:${PORT:-5000}" --timeout 120 wsgi:app
