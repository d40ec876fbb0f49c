#!/usr/bin/env bash
# Install what the tests need (Python packages, Debian's chromium) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
bash scripts/install-chromium.sh
exec .venv/bin/python -m pytest "$@"
