"""Nimbus served as scripts/serve.sh serves it (gunicorn with gevent workers, a Huey consumer)
on its defaults, against the real llama-server with one slot at 1,024 and 2,048 tokens, through
a recording proxy: the seed's refund conversation over HTTP as a browser sends it ends every
turn answered or cut off, the start line and the banner say what happens to the tools (some
left out at 1,024, the memory tools first; on the defaults, memory tools and a 512-token reply,
at 2,048 too), a chat sent
while a background call holds the slot waits no longer than that call's first token, and no
request carries the fallback sentence. Skipped, or failed in CI, as the conformance cases are."""
import os
import subprocess
import sys
import time

import pytest

from webapp.agent.model_call import FALLBACK_ERROR

from . import llama_server
from .fakes import live_app
from .fakes.recording_proxy import RecordingProxy
from .test_provider_conformance import REFUND

MEMORY_TOOLS = ["save_memory", "search_memories", "search_history"]
SHOP_TOOLS = ["lookup_order", "list_orders", "check_refund_eligibility", "create_support_ticket",
              "list_tickets", "search_help_center"]
ALL_TOOLS = SHOP_TOOLS + MEMORY_TOOLS
SLACK = 2.0  # the background call's look at its lease (0.5 s), its cancel, a token or two,
# the chat's own way from the POST to the server on a busy machine


def start_real_server(folder: str, context: int) -> llama_server.LlamaServer:
    """llama-server with one slot, or a skip (a failure when required) saying why."""
    llama_server.skip_unless_installed()
    return llama_server.LlamaServer(os.path.join(folder, "llama.log"), context=context,
                                    slots=1).start()


def start_worker(env: dict, folder: str) -> subprocess.Popen:
    """The job worker exactly as scripts/serve.sh starts it."""
    consumer = os.path.join(os.path.dirname(sys.executable), "huey_consumer")
    with open(os.path.join(folder, "huey.log"), "w") as log:
        return subprocess.Popen([consumer, "webapp.worker.huey", "--workers", "2",
                                 "--worker-type", "thread", "--quiet"],
                                cwd=live_app.ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture(params=[1024, 2048])
def served(request, tmp_path):
    """(guest, proxy, database URL, folder) for Nimbus on its defaults, the server's URL aside."""
    server = start_real_server(str(tmp_path), request.param)
    processes = []
    try:
        with RecordingProxy(server.base_url) as proxy:
            database_url = f"sqlite:///{tmp_path}/nimbus.db"
            env = live_app.app_environment(database_url, proxy.base_url, str(tmp_path))
            for test_only in ("NIMBUS_MODEL_TITLES", "NIMBUS_RATE_LIMIT_ENABLED"):
                env.pop(test_only)  # the defaults: a title job after the first answer
            app, port = live_app.start_app(env, 2, str(tmp_path))
            processes.append(app)
            processes.append(start_worker(env, str(tmp_path)))
            guest = live_app.Guest(port, timeout=300)
            guest.open()
            yield guest, proxy, database_url, str(tmp_path), request.param
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(30)
        server.stop()


def is_chat(body: dict) -> bool:
    system = next((m for m in body.get("messages", []) if m["role"] == "system"), {})
    return "support agent of" in str(system.get("content"))


def calls(proxy: RecordingProxy) -> list[dict]:
    """Every chat completion the server got: chat or background, and its times."""
    with proxy.lock:
        pairs = list(zip(proxy.requests, proxy.times))
    return [dict(times, chat=is_chat(body), body=body) for (method, path, body), times in pairs
            if method == "POST" and path.rstrip("/").endswith("/chat/completions")]


def background_in_flight(proxy: RecordingProxy, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(not c["chat"] and c["ended"] is None for c in calls(proxy)):
            return True
        time.sleep(0.01)
    return False


def send(guest, conversation: str | None, seq: int, message: str) -> tuple[str, float, float]:
    """POST the message as the composer does, read its stream to `done`: (conversation, when it
    was posted, its first token's seconds after that)."""
    posted = time.monotonic()
    path = f"/c/{conversation}/messages" if conversation else "/messages"
    status, headers, _ = guest.fetch("POST", path, form={"message": message})
    assert status == 200, status
    conversation = conversation or headers["HX-Push-Url"].rsplit("/", 1)[1]
    first = None
    for name, _ in guest.events(f"/c/{conversation}/turns/{seq}/stream"):
        if name == "token" and first is None:
            first = time.monotonic() - posted
    return conversation, posted, first


def waits_behind_background(made: list[dict], posts: list[float]) -> list[tuple[float, float]]:
    """(seconds the message waited for the slot, that background call's first token) for every
    message a background call held the slot against: from the POST (or the call's arrival, if
    later) until the call ended or the chat's own first bytes came, whichever first."""
    now, found = time.monotonic(), []
    for posted in posts:
        chat = next((c for c in made if c["chat"] and c["arrived"] >= posted), None)
        if chat is None:
            continue
        for job in made:
            if not job["chat"] and job["arrived"] < chat["arrived"] and \
                    (job["ended"] or now) > posted:
                waited = min(job["ended"] or now, chat["first"] or now) - \
                    max(posted, job["arrived"])
                found.append((waited, (job["first"] or job["ended"] or now) - job["arrived"]))
    return found


def read(path: str) -> str:
    with open(path, errors="replace") as f:
        return f.read()


@pytest.mark.timeout(600)
def test_the_seed_scenario_served_with_a_job_worker_on_one_slot(served):
    guest, proxy, database_url, folder, window = served
    conversation, posts, firsts = None, [], []
    for seq, message in enumerate(REFUND):
        if seq:  # the title job (and the distiller) run in the worker after an answer
            background_in_flight(proxy, within=20)
        conversation, posted, first = send(guest, conversation, seq, message)
        posts.append(posted)
        firsts.append(first)
    time.sleep(1)
    made = calls(proxy)
    waits = waits_behind_background(made, posts)
    print(f"\n{window} tokens: first tokens over HTTP {[round(f or -1, 1) for f in firsts]} s; "
          f"{sum(c['chat'] for c in made)} chat and {sum(not c['chat'] for c in made)} background "
          f"calls; chats behind a background call (waited, its first token): "
          f"{[(round(w, 1), round(b, 1)) for w, b in waits]}")
    zero = made[0]["arrived"] if made else 0
    print("posted", [round(p - zero, 1) for p in posts])
    for c in made:  # the timeline: who had the slot when
        print("chat" if c["chat"] else "background", *(round(c[k] - zero, 1) if c[k] else None
                                                       for k in ("arrived", "first", "ended")))

    turns = [t for t in live_app.stored_turns(database_url) if t["conversation_id"] == conversation]
    assert [t["outcome"] in ("answered", "cut_off") for t in turns] == [True] * len(REFUND), \
        [(t["seq"], t["outcome"], t["answer"][-200:]) for t in turns]
    started = read(os.path.join(folder, "gunicorn.log"))
    start_line = next(line for line in started.splitlines() if "provider: " in line)
    sent = [[t["function"]["name"] for t in c["body"].get("tools") or []]
            for c in made if c["chat"]]
    assert window > 1024 or len(sent[0]) < len(ALL_TOOLS), sent  # the specs take most of 1,024
    for names in sent:  # the memory tools are given up before any of the shop's
        assert set(names) >= set(SHOP_TOOLS) or not set(names) & set(MEMORY_TOOLS), names
    left_out = len(sent[0]) < len(ALL_TOOLS)
    assert (f"{len(sent[0])} of {len(ALL_TOOLS)} tools offered" if sent[0] else "no tools (")\
        in start_line or not left_out, start_line
    _, _, page = guest.fetch("GET", "/", headers={"HX-Request": ""})
    banner = page[page.index('id="provider-banner"'):].split("</p>")[0]
    assert ("left out" in banner or "can't hold the tools'" in banner) is left_out, banner
    # Whether a background call is on the slot when a message is sent depends on the worker's
    # polling and the machine's load: the bound holds for every chat that met one (most runs
    # meet one or two; the figures are printed above). A title is 24 tokens: short enough that
    # the bound holds even without a chat's take-over of the slot; test_served_chats_first.py
    # holds it against a long background call, where the take-over is what keeps it.
    for waited, its_first in waits:
        assert waited <= its_first + SLACK, (waited, its_first)
    for call in made:
        for m in call["body"]["messages"]:
            assert FALLBACK_ERROR not in str(m.get("content") or ""), (m["role"], call["chat"])
