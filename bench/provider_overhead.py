"""Benchmark: what Nimbus adds between the customer and an OpenAI-compatible server.

Against the real llama.cpp `llama-server` with SmolLM2-135M-Instruct when it is installed
(tests/llama_server.py: requirements-dev.txt and scripts/test.sh install both), else against the
llama-server behaviour fake (tests/fakes/compat_servers.py). Each round answers one question
through Nimbus (the agent loop: context assembly, the provider, the turn saved in a temporary
SQLite database) and then sends the very request Nimbus sent straight to the server (httpx,
streamed); the two alternate, after two warm-up rounds. Timed:
  first token: from the call until the first word of the answer arrives;
  total:       until the reply is complete (through Nimbus: the turn is also saved).
A round whose reply is a tool call has no first word and is left out (the model chose it).
Ends with: provider overhead: first token +X ms p50, +Y ms p95
Run: .venv/bin/python bench/provider_overhead.py [--replies 20] [--fake]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import httpx2  # noqa: E402

from tests import llama_server  # noqa: E402
from tests.fakes.compat_servers import CompatServer  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.agent.loop import run_turn  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm import get_provider  # noqa: E402
from webapp.llm.openai_provider import OpenAIProvider  # noqa: E402
from webapp.storage import create_conversation, start_turn  # noqa: E402

QUESTION = "Hello! In one short sentence, what can you help me with?"


class Recording(OpenAIProvider):
    """The app's provider, keeping the last request it sent so it can be replayed directly."""
    last_request: dict = {}

    def _streamed(self, request, tools_offered, purpose="chat"):
        Recording.last_request = dict(request)
        return super()._streamed(request, tools_offered, purpose)


def through_nimbus(user, provider) -> tuple[float | None, float]:
    conversation = create_conversation(user)
    turn = start_turn(conversation, QUESTION)
    started, first = time.perf_counter(), None
    for event in run_turn(turn, provider):
        if event.kind == "token" and first is None:
            first = time.perf_counter() - started
    return first, time.perf_counter() - started


def direct(client: httpx2.Client, base_url: str, request: dict) -> tuple[float | None, float]:
    started, first = time.perf_counter(), None
    with client.stream("POST", f"{base_url}/chat/completions", json=request,
                       headers={"Authorization": "Bearer bench"}) as response:
        for line in response.iter_lines():
            if not line.startswith("data:") or line.strip() == "data: [DONE]":
                continue
            chunk = json.loads(line[5:])
            if first is None and any((c.get("delta") or {}).get("content")
                                     for c in chunk.get("choices") or []):
                first = time.perf_counter() - started
    return first, time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replies", type=int, default=20)
    parser.add_argument("--fake", action="store_true", help="use the fake even if llama-server is here")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="nimbus-bench-")
    real, fake = None, None
    if not args.fake and llama_server.missing() is None:
        real = llama_server.LlamaServer(os.path.join(folder, "llama.log")).start()
        base_url, model, what = real.base_url, real.model_name, f"llama-server · {real.model_name}"
    else:
        fake = CompatServer("llama-server").start()
        base_url, model = fake.base_url, "fake-model"
        what = "the llama-server fake" + (f" ({llama_server.missing()})" if not args.fake else "")
    app = create_app({"DATABASE_URL": f"sqlite:///{folder}/bench.db", "SECRET_KEY": "bench",
                      "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "bench", "NIMBUS_MODEL": model,
                      "NIMBUS_MEMORY_SEARCH": False, "NIMBUS_MEMORY_DISTIL_ON_COMPRESS": False,
                      "NIMBUS_MAX_OUTPUT_TOKENS": 48, "NIMBUS_JOBS_IMMEDIATE": False})
    nimbus, straight, tool_rounds = {"first": [], "total": []}, {"first": [], "total": []}, 0
    try:
        with app.app_context(), httpx2.Client(timeout=120) as client:
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
            user = find_user(app.config["NIMBUS_DEMO_USER"])
            base = get_provider(app.config)
            provider = Recording(base.api_key, base.base_url, base.model, base.timeout,
                                 base.max_tokens, base.first_token_timeout, base.profile_config,
                                 base.idle_timeout, base.min_pace)
            for round_ in range(args.replies + 2):
                first, total = through_nimbus(user, provider)
                request = {k: v for k, v in Recording.last_request.items()}
                direct_first, direct_total = direct(client, base_url, request)
                if round_ < 2:
                    continue  # warm-up: connections, the profile, the model's caches
                if first is None or direct_first is None:
                    tool_rounds += 1
                    continue
                nimbus["first"].append(first * 1000)
                nimbus["total"].append(total * 1000)
                straight["first"].append(direct_first * 1000)
                straight["total"].append(direct_total * 1000)
    finally:
        if real is not None:
            real.stop()
        if fake is not None:
            fake.stop()
    n = len(nimbus["first"])
    print(f"server: {what}; {n} replies compared"
          + (f", {tool_rounds} left out (a tool call, no first word)" if tool_rounds else ""))
    if not n:
        print("provider overhead: no reply with words to compare")
        return
    for name in ("first", "total"):
        print(f"{'first token' if name == 'first' else 'total':>11}: "
              f"direct p50 {percentile(straight[name], 50):7.1f} ms  p95 {percentile(straight[name], 95):7.1f} ms | "
              f"Nimbus p50 {percentile(nimbus[name], 50):7.1f} ms  p95 {percentile(nimbus[name], 95):7.1f} ms")
    deltas = [a - b for a, b in zip(nimbus["first"], straight["first"])]
    p50 = percentile(nimbus["first"], 50) - percentile(straight["first"], 50)
    p95 = percentile(nimbus["first"], 95) - percentile(straight["first"], 95)
    print(f"per-round difference of first token: median {statistics.median(deltas):+.1f} ms")
    print(f"provider overhead: first token {p50:+.1f} ms p50, {p95:+.1f} ms p95")


if __name__ == "__main__":
    main()
