"""Shared fixtures: an app on a temporary SQLite database with the demo shop, and helpers."""
import pytest

from webapp import create_app
from webapp.accounts import find_user, seed_demo
from webapp.agent.loop import run_turn
from webapp.database import create_schema
from webapp.extensions import db
from webapp.llm.offline import OfflineModel
from webapp.storage import create_conversation, start_turn


@pytest.fixture
def app(tmp_path):
    app = create_app({"TESTING": True, "SECRET_KEY": "test",
                      "DATABASE_URL": f"sqlite:///{tmp_path / 'nimbus.db'}"})
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        yield app
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


def ask(user, question, conversation=None, provider=None):
    """Run one turn to the end and return (answer, conversation, events)."""
    conversation = conversation or create_conversation(user)
    turn = start_turn(conversation, question)
    events = list(run_turn(turn, provider or OfflineModel()))
    answer = next(e.data["text"] for e in events if e.kind == "answer")
    return answer, conversation, events
