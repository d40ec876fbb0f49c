"""Under gevent (gunicorn's worker), a write that waits for SQLite's lock lets the worker's other
streams go on: the wait was a C sleep that froze every greenlet of the process."""
import json
import pathlib
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

WRITER = r"""
from gevent import monkey; monkey.patch_all()
import json, sys, time
import gevent
from tests.support import make_app
from webapp.accounts import find_user
from webapp.storage import create_conversation

app = make_app(sys.argv[1])
ticks, done = [], []


def other_stream():
    while not done:
        ticks.append(time.monotonic())
        gevent.sleep(0.01)


def write():
    with app.app_context():  # a greenlet is a request of its own
        alex = find_user("alex@example.com")
        print("writing", flush=True)
        started = time.monotonic()
        conversation = create_conversation(alex, "Written after the wait")
        done.append(time.monotonic() - started)
        return conversation.id


gevent.spawn(other_stream)
written = gevent.spawn(write)
written.join()
print(json.dumps({"id": written.value, "waited": done[0], "ticks": len(ticks)}), flush=True)
"""


def test_a_write_waiting_for_the_lock_leaves_the_other_streams_running(app, tmp_path):
    path = app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # an import's batch, holding the write lock
    with subprocess.Popen([sys.executable, "-c", WRITER, path], stdout=subprocess.PIPE, text=True,
                          cwd=pathlib.Path(__file__).parents[1]) as writer:
        try:
            assert writer.stdout.readline().strip() == "writing"
            time.sleep(0.6)
            holder.execute("COMMIT")
            result = json.loads(writer.stdout.readline())
        finally:
            holder.close()
    assert result["waited"] > 0.4  # it really waited for the lock
    assert result["ticks"] >= 10  # ...and the other stream kept going meanwhile (frozen: 1)
    with closing(sqlite3.connect(path)) as reader:
        assert reader.execute("SELECT title FROM conversations WHERE id = ?",
                              (result["id"],)).fetchone() == ("Written after the wait",)
