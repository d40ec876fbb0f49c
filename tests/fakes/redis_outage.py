"""Redis stopped and started again under load, as bench/redis_outage.py and
tests/test_redis_outage_live.py run it: gunicorn (gevent workers) and a Huey worker with
REDIS_URL on a redis-server of their own, a fast fake provider, and guests that send one
question after another and read each reply to `done`, counting every answer by status."""
import http.client
import re
import subprocess
import sys
import tempfile
import threading
import time

from . import live_app
from .redis_server import RedisServer

QUESTIONS = ["Where is my order #1042?", "My parcel should go to the back door.",
             "Can I return the lamp?", "The espresso grinder arrived broken."]


STREAM = re.compile(r"/turns/(\d+)/stream")


class Tally:
    """Every answer the guests got, by status, and the bodies of any 5xx that is not the 503."""

    def __init__(self):
        self.lock, self.statuses, self.bare, self.errors = threading.Lock(), {}, [], {}
        self.replies = 0  # streams read to done

    def count(self, what: str, status: int, body: str = "") -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status >= 500 and not (status == 503 and "try again" in body):
                self.bare.append(f"{what} {status}: {body[:200]}")

    def error(self, text: str) -> None:
        with self.lock:
            self.errors[text] = self.errors.get(text, 0) + 1


def guest_loop(port: int, running: threading.Event, tally: Tally) -> None:
    """One browser: send, read the reply's stream to done (again after a 503, as EventSource
    reconnects), send the next question, until the bench ends."""
    conversation, asked = None, 0
    guest = live_app.Guest(port, timeout=60)
    while running.is_set():
        try:
            if not guest.token:
                status, _, page = guest.fetch("GET", "/", headers={"HX-Request": ""})
                tally.count("page", status, page)
                if status != 200:
                    time.sleep(1)
                    continue
                guest.token = live_app.CSRF.search(page).group(1)
            path = f"/c/{conversation}/messages" if conversation else "/messages"
            status, headers, body = guest.fetch(
                "POST", path, form={"message": QUESTIONS[asked % len(QUESTIONS)]})
            tally.count("send", status, body)
            if status != 200:
                time.sleep(float(headers.get("Retry-After", 1)) if status in (429, 503) else 1)
                continue
            conversation = conversation or headers["HX-Push-Url"].rsplit("/", 1)[1]
            seq = int(STREAM.search(body).group(1))
            if seq != asked:  # a send answered with a refusal had stored its question
                tally.error(f"turn {seq} where {asked} was expected")
            read_reply(guest, f"/c/{conversation}/turns/{seq}/stream", running, tally)
            asked = seq + 1
        except (OSError, http.client.HTTPException) as error:
            tally.error(type(error).__name__)
            time.sleep(0.5)


def read_reply(guest, path: str, running: threading.Event, tally: Tally) -> None:
    """Read the stream to done, reconnecting after a refusal as the browser does."""
    while True:
        connection, response = guest.request("GET", path)
        try:
            if response.status != 200:
                tally.count("stream", response.status, response.read().decode())
                time.sleep(1)
                if not running.is_set():
                    return
                continue
            tally.count("stream", 200)
            for raw in response:
                if raw.startswith(b"event: done"):
                    with tally.lock:
                        tally.replies += 1
                    return
        finally:
            connection.close()
        if not running.is_set():
            return


def query(database_url: str, sql: str) -> int:
    import sqlite3
    with sqlite3.connect(database_url[len("sqlite:///"):]) as connection:
        return connection.execute(sql).fetchone()[0]


WITHOUT_VECTOR = ("SELECT count(*) FROM turns LEFT JOIN turn_vectors ON turn_vectors.turn_id = "
                  "turns.id WHERE turns.outcome != 'pending' AND turn_vectors.turn_id IS NULL")


SWEEP = ("from webapp import create_app\n"
         "from webapp.memories.search.lost_vectors import SETTLE, queue_lost_vectors\n"
         "from webapp.models import utcnow\n"
         "app = create_app()\n"
         "with app.app_context():\n"
         "    print(queue_lost_vectors(app.config, now=utcnow() + SETTLE))\n")


def sweep_now(env: dict) -> int:
    """The worker's minute sweep for lost vectors, run at once (as its next tick would, once
    SETTLE has passed); how many turns it queued."""
    done = subprocess.run([sys.executable, "-c", SWEEP], cwd=live_app.ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return int(done.stdout.split()[-1])


def run(guests: int, before: float, outage: float, after: float, workers: int,
        wait_vectors: float, sweep_after: float | None = None, say=print) -> dict:
    """The whole scenario; its figures. With `sweep_after`, turns still without a vector that
    long after the load are swept at once rather than at the worker's next minute."""
    folder = tempfile.mkdtemp(prefix="nimbus-redis-outage-")
    redis = RedisServer().start()
    provider, provider_url = live_app.start_fake_provider(0.1, 12, 0.02)
    database_url = f"sqlite:///{folder}/nimbus.db"
    env = live_app.app_environment(database_url, provider_url, folder, REDIS_URL=redis.url,
                                   NIMBUS_MEMORY_SEARCH=1)
    app, port = live_app.start_app(env, workers, folder)
    worker = live_app.start_worker(env, folder)
    running, tally = threading.Event(), Tally()
    running.set()
    threads = [threading.Thread(target=guest_loop, args=(port, running, tally), daemon=True)
               for _ in range(guests)]
    try:
        for thread in threads:
            thread.start()
        warmed = time.monotonic() + 120  # every guest has had a reply: the workers are loaded
        while tally.replies < guests and time.monotonic() < warmed:
            time.sleep(0.2)
        time.sleep(before)
        say(f"  stopping Redis ({tally.replies} replies so far, answers {tally.statuses})")
        redis.stop()
        time.sleep(outage)
        redis.start()
        restarted = time.monotonic()
        say(f"  Redis started again ({tally.replies} replies so far, answers {tally.statuses})")
        time.sleep(after)
        running.clear()
        for thread in threads:
            thread.join(90)
        lacking = query(database_url, WITHOUT_VECTOR)
        lacking_at_restart = lacking
        swept, ended = None, time.monotonic()
        while lacking and time.monotonic() - restarted < wait_vectors:
            if sweep_after is not None and swept is None and time.monotonic() - ended > sweep_after:
                swept = sweep_now(env)
            time.sleep(1)
            lacking = query(database_url, WITHOUT_VECTOR)
        return {"guests": guests, "outage": outage, "requests": sum(tally.statuses.values()),
                "statuses": tally.statuses, "bare": tally.bare, "errors": tally.errors,
                "turns": query(database_url, "SELECT count(*) FROM turns WHERE outcome != 'pending'"),
                "pending": query(database_url, "SELECT count(*) FROM turns WHERE outcome = 'pending'"),
                "lacking_after_load": lacking_at_restart, "lacking": lacking,
                "vectors_after": time.monotonic() - restarted, "swept": swept, "folder": folder}
    finally:
        running.clear()
        for process in (worker, app, provider):
            process.terminate()
            process.wait(30)
        redis.stop()
