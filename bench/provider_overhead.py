"""Benchmark: what Nimbus adds, over the web, between a person and an OpenAI-compatible server.

Against the real llama.cpp `llama-server` with SmolLM2-135M-Instruct when it is installed
(tests/llama_server.py: requirements-dev.txt and scripts/test.sh install both), else against the
llama-server behaviour fake (tests/fakes/compat_servers.py). Nimbus runs as it is served:
gunicorn with gevent workers (scripts/serve.sh), on a temporary SQLite database. Each round is
what a person waits for: a guest's browser POSTs a question to /messages and reads the reply's
SSE stream (through Nimbus); then the very request Nimbus sent is sent straight to the server
(httpx, streamed). Both go through one recording proxy, which is how the request Nimbus sent is
known, so its hop counts on both sides. The two alternate, after two warm-up rounds. Timed:
  first token: from the send until the first word arrives (an SSE `block` or `token` event, or
               the first content delta straight from the server);
  total:       until the reply is complete (through Nimbus: its `done` event, the turn saved).
A round whose reply is a tool call has no first word and is left out (the model chose it).
Ends with: provider overhead: first token +X ms p50, +Y ms p95
Run: .venv/bin/python bench/provider_overhead.py [--replies 20] [--fake] [--workers 2]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import httpx2  # noqa: E402

from tests import llama_server  # noqa: E402
from tests.fakes.compat_servers import CompatServer  # noqa: E402
from tests.fakes.live_app import free_port  # noqa: E402
from tests.fakes.recording_proxy import RecordingProxy  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402

QUESTION = "Hello! In one short sentence, what can you help me with?"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def serve(settings: dict, workers: int) -> tuple[subprocess.Popen, str]:
    """gunicorn with gevent workers, as scripts/serve.sh starts it; returns it and its URL."""
    port = free_port()
    process = subprocess.Popen(
        [os.path.join(sys.prefix, "bin", "gunicorn"), "--worker-class", "gevent",
         "--workers", str(workers), "--bind", f"127.0.0.1:{port}", "--timeout", "120",
         "--log-level", "warning", "wsgi:app"],
        cwd=ROOT, env={**os.environ, **settings}, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"{url}/login", timeout=1)
            return process, url
        except httpx2.HTTPError:
            if process.poll() is not None:
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("gunicorn did not answer within 60 s")


def through_nimbus(browser: httpx2.Client, url: str, token: str) -> tuple[float | None, float,
                                                                        float]:
    """Send the question as the chat page does and read the reply's stream to its end: (first
    word, end, the send's own answer), in seconds from the send."""
    started, first = time.perf_counter(), None
    sent = browser.post(f"{url}/messages", data={"message": QUESTION},
                        headers={"X-CSRFToken": token, "HX-Request": "true"})
    sent.raise_for_status()
    answered = time.perf_counter() - started
    stream = re.search(r'sse-connect="([^"]+)"', sent.text).group(1)
    with browser.stream("GET", f"{url}{stream}") as response:
        for line in response.iter_lines():
            if first is None and line in ("event: block", "event: token"):
                first = time.perf_counter() - started
            if line == "event: done":
                break
    return first, time.perf_counter() - started, answered


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
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (serve.sh: 2)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="nimbus-bench-")
    real, fake, web = None, None, None
    if not args.fake and llama_server.missing() is None:
        real = llama_server.LlamaServer(os.path.join(folder, "llama.log")).start()
        base_url, model, what = real.base_url, real.model_name, f"llama-server · {real.model_name}"
    else:
        fake = CompatServer("llama-server").start()
        base_url, model = fake.base_url, "fake-model"
        what = "the llama-server fake" + (f" ({llama_server.missing()})" if not args.fake else "")
    nimbus, straight, tool_rounds = {"first": [], "total": [], "send": []}, \
        {"first": [], "total": []}, 0
    try:
        with RecordingProxy(base_url) as proxy, httpx2.Client(timeout=120) as client, \
                httpx2.Client(timeout=120) as browser:
            settings = {"DATABASE_URL": f"sqlite:///{folder}/bench.db", "SECRET_KEY": "bench-" + "x" * 32,
                        "OPENAI_BASE_URL": proxy.base_url, "OPENAI_API_KEY": "bench",
                        "NIMBUS_MODEL": model, "NIMBUS_MEMORY_SEARCH": "0",
                        "NIMBUS_MEMORY_DISTIL_ON_COMPRESS": "0", "NIMBUS_MAX_OUTPUT_TOKENS": "48",
                        "NIMBUS_MODEL_TITLES": "0", "NIMBUS_RATE_LIMIT_ENABLED": "0",
                        "NIMBUS_JOBS_DB": f"{folder}/jobs.db"}  # jobs queue up; no worker runs them
            app = create_app({k: settings[k] for k in ("DATABASE_URL", "SECRET_KEY",
                                                       "NIMBUS_JOBS_DB")})
            with app.app_context():
                create_schema()
                seed_demo(app.config["NIMBUS_DEMO_TENANT"])
            web, url = serve(settings, args.workers)
            page = browser.get(f"{url}/")  # a guest's browser: its session and CSRF token
            token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text).group(1)
            for round_ in range(args.replies + 2):
                first, total, send = through_nimbus(browser, url, token)
                request = proxy.chat_requests()[-1]
                direct_first, direct_total = direct(client, proxy.base_url, request)
                if round_ < 2:
                    continue  # warm-up: connections, the profile, the model's caches
                if first is None or direct_first is None:
                    tool_rounds += 1
                    continue
                nimbus["first"].append(first * 1000)
                nimbus["total"].append(total * 1000)
                nimbus["send"].append(send * 1000)
                straight["first"].append(direct_first * 1000)
                straight["total"].append(direct_total * 1000)
    finally:
        if web is not None:
            web.terminate()
            web.wait(10)
        if real is not None:
            real.stop()
        if fake is not None:
            fake.stop()
    n = len(nimbus["first"])
    print(f"server: {what}; Nimbus: gunicorn, {args.workers} gevent workers; {n} replies compared"
          + (f", {tool_rounds} left out (a tool call, no first word)" if tool_rounds else ""))
    if not n:
        print("provider overhead: no reply with words to compare")
        return
    for name in ("first", "total"):
        print(f"{'first token' if name == 'first' else 'total':>11}: "
              f"direct p50 {percentile(straight[name], 50):7.1f} ms  p95 {percentile(straight[name], 95):7.1f} ms | "
              f"Nimbus p50 {percentile(nimbus[name], 50):7.1f} ms  p95 {percentile(nimbus[name], 95):7.1f} ms")
    print(f"{'send':>11}: the POST answered (the turn stored, the reply started) p50 "
          f"{percentile(nimbus['send'], 50):7.1f} ms  p95 {percentile(nimbus['send'], 95):7.1f} ms")
    deltas = [a - b for a, b in zip(nimbus["first"], straight["first"])]
    p50 = percentile(nimbus["first"], 50) - percentile(straight["first"], 50)
    p95 = percentile(nimbus["first"], 95) - percentile(straight["first"], 95)
    print(f"per-round difference of first token: median {statistics.median(deltas):+.1f} ms")
    print(f"provider overhead: first token {p50:+.1f} ms p50, {p95:+.1f} ms p95")


if __name__ == "__main__":
    main()
