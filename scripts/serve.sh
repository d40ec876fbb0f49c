#!/usr/bin/env bash
# Install everything and serve Nimbus on the embedded defaults (offline model, SQLite in instance/).
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-5000}"
# Links the commands print (the demo conversation, ask's sign-in link) point at this server.
export NIMBUS_PUBLIC_URL="${NIMBUS_PUBLIC_URL:-http://127.0.0.1:$port}"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
# A busy port is said plainly, before anything starts, rather than as gunicorn's retries.
if ! .venv/bin/python -c "import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(sys.argv[1])))" "$port" 2>/dev/null; then
    echo "Port $port is already in use (another Nimbus, or another program). Stop it, or run PORT=5001 $0" >&2
    exit 1
fi
.venv/bin/flask --app webapp init-db --demo
# The worker runs background jobs (summaries, memory distillation) off the request path.
.venv/bin/huey_consumer webapp.worker.huey --workers 2 --worker-type thread --quiet &
worker=$!
# gevent workers hold many open SSE streams at once; the dev server is for debugging only.
# gunicorn also reads ./gunicorn.conf.py: its request-line bound, its refusals' security headers.
.venv/bin/gunicorn --worker-class gevent --workers "${WEB_CONCURRENCY:-2}" \
    --bind "127.0.0.1:$port" --timeout 120 wsgi:app &
server=$!
trap 'kill $worker $server 2>/dev/null' EXIT
trap 'exit 130' INT TERM  # so EXIT's trap runs (and stops both) on Ctrl+C or a kill
# The address is printed once gunicorn listens on it, not before.
until .venv/bin/python -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()" "$port" 2>/dev/null; do
    kill -0 $server 2>/dev/null || { echo "gunicorn did not start; see its messages above." >&2; exit 1; }
    sleep 0.2
done
echo "Nimbus is at http://127.0.0.1:$port/ (Ctrl+C stops it)"
wait $server
