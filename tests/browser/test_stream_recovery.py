"""A reply's server dies under the reader: the page says so, keeps the words, then shows the turn
as the server stored it. Served by gunicorn as scripts/serve.sh runs it; its workers are killed."""
import os
import re
import secrets
import signal
import subprocess
import sys
import time

import pytest
from playwright.sync_api import expect

from tests.fakes import live_app
from tests.postgres_support import new_database

QUESTION = "How long does shipping take? Please explain everything in detail."


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/nimbus.db"
        return
    url, drop = new_database()
    try:
        yield url
    finally:
        drop()


@pytest.fixture
def served(database_url, tmp_path):
    """gunicorn (2 gevent workers) with the offline model speaking 4 words a second."""
    env = dict(os.environ, DATABASE_URL=database_url, SECRET_KEY=secrets.token_hex(16),
               NIMBUS_JOBS_DB=str(tmp_path / "jobs.db"), NIMBUS_RATE_LIMIT_ENABLED="0",
               NIMBUS_MEMORY_SEARCH="0", NIMBUS_OFFLINE_WORDS_PER_SECOND="4",
               NIMBUS_LEASE_SECONDS="4", NIMBUS_HEARTBEAT_SECONDS="2")
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REDIS_URL"):
        env.pop(key, None)
    subprocess.run([sys.executable, "-m", "flask", "--app", "webapp", "init-db", "--demo"],
                   cwd=live_app.ROOT, env=env, check=True, capture_output=True)
    app, port = start_gunicorn(env, tmp_path)
    try:
        yield app, port, database_url
    finally:
        app.terminate()
        app.wait(30)


def start_gunicorn(env, folder):
    port = live_app.free_port()
    with open(folder / "gunicorn.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--worker-class", "gevent", "--workers", "2",
             "--bind", f"127.0.0.1:{port}", "--timeout", "120", "--graceful-timeout", "5", "wsgi:app"],
            cwd=live_app.ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    live_app.wait_for_port(port)
    return process, port


def stored_answer(database_url: str) -> tuple[str, str]:
    query = "SELECT outcome, answer FROM turns ORDER BY id DESC LIMIT 1"
    if database_url.startswith("sqlite:///"):
        import sqlite3
        with sqlite3.connect(database_url[len("sqlite:///"):]) as connection:
            return connection.execute(query).fetchone()
    import psycopg
    with psycopg.connect(database_url) as connection:
        return connection.execute(query).fetchone()


@pytest.mark.timeout(300)  # two gunicorn boots and a lease running out, on a loaded box
@pytest.mark.parametrize("words_before_crash, width", [(1, 390), (6, 1280)],
                         ids=["before-the-first-heartbeat", "mid-reply"])
def test_a_crashed_server_is_said_and_the_stored_words_come_back(
        served, browser, words_before_crash, width):
    app, port, database_url = served
    context = browser.new_context(base_url=f"http://127.0.0.1:{port}",
                                  viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        page.goto("/", timeout=90_000)  # a loaded CI box takes a while to warm a fresh worker
        page.get_by_label("Message Nimbus").fill(QUESTION)
        page.get_by_label("Message Nimbus").press("Enter")
        streamed = page.locator("#turn-1-answer.is-streaming .streamed-text")
        expect(streamed).to_have_text(re.compile(r"^(\S+\s+){%d}" % (words_before_crash - 1)
                                                 + r"\S+"), timeout=20_000)
        for pid in live_app.worker_pids(app.pid):
            os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        shown = streamed.inner_text()

        expect(page.locator("#turn-1-answer .stream-notice")).to_have_text(
            "Connection lost — reconnecting…", timeout=5_000)
        assert time.monotonic() - killed < 5
        assert streamed.inner_text().startswith(shown)  # the words stay while it waits

        answer = page.locator("#turn-1-answer:not(.is-streaming) .markdown")
        expect(answer).to_be_visible(timeout=90_000)
        outcome, stored = stored_answer(database_url)
        assert outcome == "interrupted"
        assert answer.inner_text().strip() == stored.strip()
        kept = stored.removesuffix(" …").split()
        # The words checkpointed before the crash (the first one always, the rest at each
        # heartbeat) are what the page shows now: none is lost, none is made up.
        assert kept and kept == shown.split()[:len(kept)]
        expect(page.locator("#turn-1-answer .tag")).to_have_text("Interrupted — recovered")

        page.reload()  # the page as stored reads the same
        expect(page.locator("#turn-1-answer .markdown")).to_have_text(stored.strip())
    finally:
        context.close()
