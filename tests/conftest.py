"""Shared fixtures: an app on a temporary SQLite database with the demo shop, and helpers."""
import re
import shutil

import pytest

from webapp import create_app
from webapp.accounts import find_user, seed_demo
from webapp.agent.loop import run_turn
from webapp.runs.heartbeat import stop_heartbeat
from webapp.database import create_schema
from webapp.extensions import db
from webapp.llm.offline import OfflineModel
from webapp.models import User
from webapp.storage import create_conversation, start_turn


def make_app(path):
    # Embeddings are on by default; tests about them switch them on (tests/test_memory_recall.py),
    # the rest skip embedding every turn they write.
    return create_app({"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": f"sqlite:///{path}",
                       "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0, "NIMBUS_MEMORY_SEARCH": False})


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory):
    """Run the migrations and seed the demo once; every test starts from a copy of that file."""
    path = tmp_path_factory.mktemp("template") / "nimbus.db"
    app = make_app(path)
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        db.session.remove()
        db.engine.dispose()
    return path


@pytest.fixture
def app(tmp_path, migrated_database):
    shutil.copy(migrated_database, tmp_path / "nimbus.db")
    app = make_app(tmp_path / "nimbus.db")
    with app.app_context():
        yield app
        wait_for_replies(app)
        stop_heartbeat(app)
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def alex(app):
    return find_user("alex@example.com")


@pytest.fixture
def sam(app):
    return find_user("sam@example.com")


def run(runner, *args) -> str:
    """Invoke a flask command that must succeed; return what it printed."""
    result = runner.invoke(args=list(args))
    assert result.exit_code == 0, result.output
    return result.output


def ask(user, question, conversation=None, provider=None):
    """Run one turn to the end and return (answer, conversation, events)."""
    conversation = conversation or create_conversation(user)
    turn = start_turn(conversation, question)
    events = list(run_turn(turn, provider or OfflineModel()))
    answer = next(e.data["text"] for e in events if e.kind == "answer")
    return answer, conversation, events


@pytest.fixture
def guest(client):
    """A browser's client: it opened the chat page, so it has a guest session and sends the CSRF token."""
    page = client.get("/")
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text).group(1)
    client.environ_base["HTTP_X_CSRFTOKEN"] = token
    return client


def guest_user(client):
    """The User behind a test client's session."""
    with client.session_transaction() as session:
        return db.session.get(User, int(session["_user_id"].split(":")[0]))


def sse_events(body: str) -> list[tuple[str, str]]:
    """(event, data) pairs of a server-sent event stream, multi-line data joined as the browser does."""
    events = []
    for block in body.split("\n\n"):
        lines = block.split("\n")
        names = [line[len("event: "):] for line in lines if line.startswith("event: ")]
        if names:
            events.append((names[0], "\n".join(line[len("data: "):] for line in lines
                                                if line.startswith("data: "))))
    return events


def use_provider(app, provider):
    """Make every reply of this app come from `provider`."""
    app.extensions["provider_factory"] = lambda config: provider
    return provider


def wait_for_replies(app, timeout=10):
    """Let the background runs of this app finish (a test must not end with a reply half-saved)."""
    for run in list(app.extensions.get("turn_runs", {}).values()):
        run.thread.join(timeout)
        assert not run.thread.is_alive(), "a reply is still being written"
