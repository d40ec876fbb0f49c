"""A gunicorn worker killed mid-stream: its turns are taken over, keep their words, and close well."""
import http.client
import os
import signal
import threading
import time

import pytest

from webapp.agent.loop import FALLBACK_INTERRUPTED
from webapp.llm.messages import validate_turn

from .fakes import live_app

pytestmark = pytest.mark.slow  # kills a gunicorn worker mid-reply

GUESTS, WORDS = 6, 40


@pytest.fixture
def served(tmp_path):
    """The app under gunicorn (2 gevent workers, SQLite) with a fake provider: 0.2 s, a tool, words."""
    provider, url = live_app.start_fake_provider(0.2, WORDS, 0.1)
    database_url = f"sqlite:///{tmp_path}/nimbus.db"
    env = live_app.app_environment(database_url, url, str(tmp_path))
    app, port = live_app.start_app(env, 2, str(tmp_path))
    try:
        yield app, port, database_url
    finally:
        app.terminate()
        app.wait(30)
        provider.terminate()
        provider.wait(10)


def converse(port: int, seen: dict, deadline: float) -> None:
    """Send, then read the stream; when the connection breaks, reconnect as EventSource does."""
    guest = live_app.Guest(port, timeout=30)
    guest.open()
    status, headers, _ = guest.fetch("POST", "/messages", form={"message": "Where is order #1042?"})
    assert status == 200
    seen.update(guest=guest, conversation=headers["HX-Push-Url"].rsplit("/", 1)[1], tokens=0)
    while time.monotonic() < deadline and "done" not in seen:
        try:
            for name, data in guest.events(f"/c/{seen['conversation']}/turns/0/stream"):
                seen["tokens"] += name == "token"
                if name == "done":
                    seen["done"] = data
        except (OSError, http.client.HTTPException):
            pass
        if "done" not in seen:  # the worker died under the stream
            seen["broken"] = True
            time.sleep(1)


def busiest_worker(master: int) -> int:
    """The worker with the most open sockets: the one serving streams."""
    def sockets(pid):
        try:
            return sum(os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
                       for fd in os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return 0
    return max(live_app.worker_pids(master), key=sockets)


def test_a_killed_worker_s_turns_are_answered_or_closed_with_their_words(served):
    app, port, database_url = served
    seen = [{} for _ in range(GUESTS)]
    deadline = time.monotonic() + 90
    guests = [threading.Thread(target=converse, args=(port, s, deadline)) for s in seen]
    for thread in guests:
        thread.start()
    while not any(s.get("tokens", 0) >= 25 for s in seen) and time.monotonic() < deadline:
        time.sleep(0.05)  # words are being written, and some were checkpointed
    os.kill(busiest_worker(app.pid), signal.SIGKILL)
    killed_at = time.monotonic()
    time.sleep(2)
    if not any(s.get("broken") for s in seen):  # every stream was on the other worker
        os.kill(busiest_worker(app.pid), signal.SIGKILL)
    for thread in guests:
        thread.join(max(0, killed_at + 30 - time.monotonic()))
    assert all("done" in s for s in seen), "a turn was not finished within 30 s"
    assert any(s.get("broken") for s in seen)

    ours = {s["conversation"] for s in seen}  # init-db --demo seeds a conversation of its own
    turns = [t for t in live_app.stored_turns(database_url) if t["conversation_id"] in ours]
    assert sorted(t["conversation_id"] for t in turns) == sorted(s["conversation"] for s in seen)
    full = " ".join(f"w{i}" for i in range(WORDS))
    for turn in turns:
        assert validate_turn(turn["messages"])  # every tool call has its result
        if turn["outcome"] == "answered":
            assert turn["answer"] == full
        else:
            assert turn["outcome"] == "interrupted"
            words = turn["answer"].removesuffix(" …").split()
            assert turn["answer"] == FALLBACK_INTERRUPTED or (
                turn["answer"].endswith(" …") and full.startswith(" ".join(words)))
    assert any(t["outcome"] == "interrupted" and t["answer"] != FALLBACK_INTERRUPTED for t in turns)

    customer = next(s for s in seen if s.get("broken"))
    status, _, _ = customer["guest"].fetch("POST", f"/c/{customer['conversation']}/messages",
                                           form={"message": "Thanks!"})
    assert status == 200
    done = [data for name, data in customer["guest"].events(
        f"/c/{customer['conversation']}/turns/1/stream") if name == "done"]
    assert done and f"w{WORDS - 1}" in done[0]
