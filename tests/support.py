"""Helpers the tests share (plain functions; the fixtures live in conftest.py): the test app,
running a turn or a command, reading a stream, installing a provider, waiting for replies."""
import re
from contextlib import contextmanager

from webapp import create_app
from webapp.agent.loop import run_turn
from webapp.extensions import db
from webapp.llm.offline import OfflineModel
from webapp.models import User
from webapp.storage import create_conversation, start_turn

# Short waits: a Stop on a reply nobody writes, or a provider that hangs, fails in seconds, not
# in the production defaults' 10 s (NIMBUS_STOP_WAIT) or minute (NIMBUS_PROVIDER_TIMEOUT).
TEST_TIMEOUTS = {"NIMBUS_STOP_WAIT": 2.0, "NIMBUS_PROVIDER_TIMEOUT": 10.0,
                 "NIMBUS_FIRST_TOKEN_TIMEOUT": 10.0, "NIMBUS_IDLE_TIMEOUT": 10.0,
                 # A fake server's scripted replies and recorded requests are the chat's alone;
                 # titles by model have their own tests (tests/test_model_titles.py).
                 "NIMBUS_MODEL_TITLES": False}


def make_app(path):
    # Embeddings are on by default; tests about them switch them on (tests/test_memory_recall.py),
    # the rest skip embedding every turn they write.
    return create_app({"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": f"sqlite:///{path}",
                       "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0, "NIMBUS_MEMORY_SEARCH": False,
                       **TEST_TIMEOUTS})


@contextmanager
def demo_shop_copies(prefix: str):
    """A function giving each call a fresh copy of the seeded demo shop (an app on its own
    SQLite file, as `app_on`): the benches play each case on a shop no other case has touched."""
    import os
    import shutil
    import tempfile
    from webapp.accounts import seed_demo
    from webapp.database import create_schema
    folder = tempfile.mkdtemp(prefix=prefix)
    template = os.path.join(folder, "template.db")
    copies = iter(range(1 << 30))

    @contextmanager
    def fresh_shop():
        path = os.path.join(folder, f"copy{next(copies)}.db")
        shutil.copy(template, path)
        with app_on(path) as app:
            yield app
    try:
        with app_on(template) as app:
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        yield fresh_shop
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def app_on(path):
    """The test app on the SQLite file `path`, inside its app context; afterwards its replies
    are waited for, its heartbeat stopped and its connections closed."""
    from webapp.runs.heartbeat import stop_heartbeat
    app = make_app(path)
    with app.app_context():
        yield app
        wait_for_replies(app)
        stop_heartbeat(app)
        db.session.remove()
        db.engine.dispose()


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


def open_as_guest(client):
    """A new browser opens the chat page (so it sends the CSRF token) and writes once (an empty
    message, answered 204), so its guest is stored: reading pages stores nobody."""
    from .accounts_support import fresh_request_globals
    fresh_request_globals()  # another client's token and user, cached in the shared app context
    page = client.get("/")
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text).group(1)
    client.environ_base["HTTP_X_CSRFTOKEN"] = token
    assert client.post("/messages", data={"message": ""}).status_code == 204
    fresh_request_globals()
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


def sqlite_steps(call) -> int:
    """Hundreds of SQLite virtual-machine instructions a call runs: the work done, not a time."""
    raw = db.session.connection().connection.driver_connection
    steps = [0]

    def tick():
        steps[0] += 1
        return 0
    raw.set_progress_handler(tick, 100)
    try:
        call()
    finally:
        raw.set_progress_handler(None, 100)
    return steps[0]
