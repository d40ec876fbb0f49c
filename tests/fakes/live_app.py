"""The app served as scripts/serve.sh serves it (gunicorn, gevent workers) against a slow fake
OpenAI-compatible server in its own process, and guests that talk to it over HTTP as a browser
does. bench/load.py and the crash test share it.
"""
import http.client
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from urllib.parse import urlencode

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def start_fake_provider(first_token_delay: float, words: int, pace: float) -> tuple:
    """The slow fake OpenAI-compatible server (gevent, so hundreds of streams cost little)."""
    port = free_port()
    code = ("from gevent import monkey; monkey.patch_all()\n"
            "from tests.fakes.openai_server import serve_slow\n"
            f"serve_slow({port}, {first_token_delay}, {words}, {pace})\n")
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    wait_for_port(port)
    return process, f"http://127.0.0.1:{port}/v1"


def app_environment(database_url: str, provider_url: str, folder: str, **extra) -> dict:
    env = dict(os.environ, DATABASE_URL=database_url, OPENAI_BASE_URL=provider_url,
               OPENAI_API_KEY="bench", SECRET_KEY=secrets.token_hex(16),
               NIMBUS_JOBS_DB=os.path.join(folder, "jobs.db"),
               NIMBUS_RATE_LIMIT_ENABLED="0",  # every guest of a load test shares one IP
               NIMBUS_MODEL_TITLES="0")  # the fake's requests are the chats' alone
    env.pop("REDIS_URL", None)
    env.update({key: str(value) for key, value in extra.items()})
    return env


def start_app(env: dict, workers: int, folder: str) -> tuple:
    """init-db --demo, then gunicorn exactly as scripts/serve.sh runs it."""
    subprocess.run([sys.executable, "-m", "flask", "--app", "webapp", "init-db", "--demo"],
                   cwd=ROOT, env=env, check=True, capture_output=True)
    port = free_port()
    with open(os.path.join(folder, "gunicorn.log"), "w") as log:  # the child keeps its copy
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--worker-class", "gevent", "--workers",
             str(workers), "--bind", f"127.0.0.1:{port}", "--timeout", "120", "wsgi:app"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_for_port(port)
    return process, port


def start_worker(env: dict, folder: str) -> subprocess.Popen:
    """The Huey consumer as scripts/serve.sh runs it."""
    with open(os.path.join(folder, "worker.log"), "w") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "huey.bin.huey_consumer", "webapp.worker.huey", "--workers",
             "2", "--worker-type", "thread"], cwd=ROOT, env=env, stdout=log,
            stderr=subprocess.STDOUT)


def worker_pids(master: int) -> list[int]:
    """The gunicorn workers: processes whose parent is the master."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == master:
                        pids.append(int(name))
            except (OSError, IndexError, ValueError):
                pass
    return pids


class Guest:
    """One browser: its own session cookie and CSRF token, the headers htmx sends."""

    def __init__(self, port: int, timeout: float = 120):
        self.port, self.timeout, self.cookies, self.token = port, timeout, {}, ""

    def request(self, method: str, path: str, form: dict | None = None, headers: dict | None = None,
                body: bytes | None = None):
        """Send a form (or a `body` of the headers' Content-Type) with the session's cookies."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        body = urlencode(form) if form is not None else body
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        sent = {"Cookie": cookie, "HX-Request": "true", "X-CSRFToken": self.token,
                **({"Content-Type": "application/x-www-form-urlencoded"} if body else {}),
                **(headers or {})}
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        for header in response.msg.get_all("Set-Cookie") or []:
            name, _, value = header.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value
        return connection, response

    def fetch(self, method: str, path: str, **kwargs) -> tuple[int, dict, str]:
        connection, response = self.request(method, path, **kwargs)
        try:
            return response.status, dict(response.getheaders()), response.read().decode()
        finally:
            connection.close()

    def open(self) -> None:
        status, _, page = self.fetch("GET", "/", headers={"HX-Request": ""})
        self.token = CSRF.search(page).group(1)

    def events(self, path: str):
        """(event, data) pairs of an SSE stream as they arrive, until `done` or the end."""
        connection, response = self.request("GET", path)
        try:
            if response.status != 200:
                raise ConnectionError(f"stream answered {response.status}")
            name, data = None, []
            for raw in response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and name:
                    yield name, "\n".join(data)
                    if name == "done":
                        return
                    name, data = None, []
        finally:
            connection.close()


def pending_turns(database_url: str) -> int:
    query = "SELECT count(*) FROM turns WHERE outcome = 'pending'"
    if database_url.startswith("sqlite:///"):
        import sqlite3
        with sqlite3.connect(database_url[len("sqlite:///"):]) as connection:
            return connection.execute(query).fetchone()[0]
    import psycopg
    with psycopg.connect(database_url) as connection:
        return connection.execute(query).fetchone()[0]


def stored_turns(database_url: str) -> list[dict]:
    """Every stored turn as (conversation_id, seq, outcome, answer, messages)."""
    query = "SELECT conversation_id, seq, outcome, answer, messages FROM turns ORDER BY id"
    import sqlite3
    with sqlite3.connect(database_url[len("sqlite:///"):]) as connection:
        return [dict(zip(("conversation_id", "seq", "outcome", "answer", "messages"),
                         row[:4] + (json.loads(row[4]),)))
                for row in connection.execute(query)]
