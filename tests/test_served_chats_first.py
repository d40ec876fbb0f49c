"""Chats first, as served (gunicorn and the Huey worker of scripts/serve.sh, separate processes)
against a one-slot server whose background call is long: a chat sent while the worker's call
streams gets its first token within one background call's first token (plus SLACK), because it
takes the slot over. Without the take-over it would wait out the whole call (about 12 s here).
The real-server run (test_real_served.py) states the same bound; its titles are too short to
tell a take-over from a wait, this one is not."""
import time

import pytest

from .fakes import live_app
from .fakes.compat_servers import CompatServer
from .test_real_served import SLACK, send

TITLE_ASKED = "Write a title"
PROMPT_SECONDS = 2.0  # the background call's first token: the server reading its prompt
PACE = 0.5  # seconds a word: the title's 24 tokens take 12 s after its first


def long_title(request: dict) -> dict | None:
    """The title job's call reads its prompt for PROMPT_SECONDS, then writes slowly."""
    system = (request.get("messages") or [{}])[0].get("content") or ""
    if system.startswith(TITLE_ASKED):
        return {"text": " ".join(f"Refund{i}" for i in range(200)), "pace": PACE,
                "delay": PROMPT_SECONDS}
    return None


def titles_spoken(server: CompatServer) -> list[float]:
    """Seconds from its slot to its first word, for each title call that has spoken."""
    with server.lock:
        return [seconds for request, seconds in server.state.first_words
                if (request["messages"][0].get("content") or "").startswith(TITLE_ASKED)]


@pytest.fixture
def served(tmp_path):
    """(guest, fake server) for Nimbus on its defaults (titles by the model) and its job worker."""
    with CompatServer("llama-server") as server:
        server.state.reply_for = long_title
        env = live_app.app_environment(f"sqlite:///{tmp_path}/nimbus.db", server.base_url,
                                       str(tmp_path))
        env.pop("NIMBUS_MODEL_TITLES")  # the default: a title job after the first answer
        processes = []
        try:
            app, port = live_app.start_app(env, 1, str(tmp_path))
            processes.append(app)
            processes.append(live_app.start_worker(env, str(tmp_path)))
            guest = live_app.Guest(port, timeout=60)
            guest.open()
            yield guest, server
        finally:
            for process in reversed(processes):
                process.terminate()
                process.wait(30)


@pytest.mark.timeout(120)
def test_a_chat_waits_no_longer_than_a_long_background_calls_first_token(served):
    guest, server = served
    conversation, _, _ = send(guest, None, 0, "Hello, where is my parcel?")
    deadline = time.monotonic() + 30
    while not titles_spoken(server):  # the worker's title call holds the slot and streams
        assert time.monotonic() < deadline, "no title call reached the server"
        time.sleep(0.05)
    _, _, first = send(guest, conversation, 1, "Can I change the address?")
    its_first = titles_spoken(server)[0]
    print(f"\nthe chat's first token {first:.2f} s after its POST; "
          f"the background call's first token {its_first:.2f} s")
    assert first <= its_first + SLACK, (first, its_first)
