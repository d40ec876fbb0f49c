"""One provider slot budget for every process: a background call in the job worker gives the
one-slot server's slot up to a chat in a web worker, a background call waits while a chat in
another process waits, and a slot whose process died frees itself."""
import json
import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest

from webapp.extensions import db
from webapp.llm import get_provider, openai_provider, profile, slot_leases
from webapp.llm.calls import _SLOTS
from webapp.models import Lock, utcnow

from .fakes.compat_servers import CompatServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = """
import json, sys, time
from tests.support import make_app
from webapp.llm import get_provider
app = make_app(sys.argv[1])
app.config.update(OPENAI_BASE_URL=sys.argv[2], OPENAI_API_KEY="test", NIMBUS_MODEL="fake-model")
with app.app_context():
    started, spoke, outcome = time.monotonic(), False, "answered"
    try:
        for piece in get_provider(app.config).stream(
                [{"role": "user", "content": "Tell me a long story"}], [], purpose="background"):
            if isinstance(piece, str) and not spoke:
                print("SPOKE", flush=True)
                spoke = True
    except Exception as error:
        outcome = f"{type(error).__name__}: {error}"
    print(json.dumps({"outcome": outcome, "seconds": time.monotonic() - started}), flush=True)
"""


@pytest.fixture
def server(app):
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    with CompatServer("llama-server") as served:  # one slot: a second request waits its turn
        app.config.update(OPENAI_BASE_URL=served.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model")
        yield served
    profile.forget()
    _SLOTS.clear()


def first_word_after(provider, question: str) -> float:
    started = time.monotonic()
    for piece in provider.stream([{"role": "user", "content": question}], []):
        if isinstance(piece, str):
            return time.monotonic() - started
    raise AssertionError("no words")


def test_a_chat_takes_the_slot_from_the_job_workers_background_call(app, server):
    path = app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///")
    worker = subprocess.Popen([sys.executable, "-c", WORKER, path, server.base_url],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline().strip() == "SPOKE"  # the story streams for seconds
        waited = first_word_after(get_provider(app.config), "Hello")
        background = json.loads(worker.stdout.readline())
    finally:
        worker.kill()
        worker.wait()
        worker.stdout.close()
    assert "gave its slot to a chat" in background["outcome"], background
    assert waited < 2.0, f"the chat's first word came after {waited:.1f} s"


def held_by_another_process(name: str, owner: str, seconds: float = 10) -> None:
    db.session.add(Lock(name=name, owner=owner, expires_at=utcnow() + timedelta(seconds=seconds)))
    db.session.commit()


def test_a_background_call_waits_while_a_chat_elsewhere_waits(app):
    held_by_another_process("provider:http://x/v1:waiting:abc", "chat-abc")
    with pytest.raises(TimeoutError):
        slot_leases.take("http://x/v1", 1, chat=False, timeout=0.3)
    db.session.execute(db.delete(Lock))
    db.session.commit()
    lease = slot_leases.take("http://x/v1", 1, chat=False, timeout=0.3)
    assert lease is not None
    lease.end()


def test_a_slot_whose_process_died_frees_itself(app):
    held_by_another_process("provider:http://x/v1:slot:0", "chat-dead", seconds=-1)
    lease = slot_leases.take("http://x/v1", 1, chat=True, timeout=0.3)
    assert lease is not None and lease.name.endswith(":slot:0")
    lease.end()
    assert db.session.query(Lock).count() == 0, "the slot and the chat's waiting mark are gone"


def test_a_chat_that_finds_a_slot_free_takes_it_in_one_transaction(app):
    """Its `waiting` mark is for waiting: written and deleted around a free slot, it cost two
    writes on every chat's way to its first token."""
    writes = []

    def count(conn, cursor, statement, *args):
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
            writes.append(statement.split()[0])

    db.event.listen(db.engine, "before_cursor_execute", count)
    try:
        lease = slot_leases.take("http://x/v1", 1, chat=True, timeout=0.3)
        taking = list(writes)
        lease.end()
    finally:
        db.event.remove(db.engine, "before_cursor_execute", count)
    assert taking == ["INSERT"], taking  # the slot; expired leases are cleared when there are some
