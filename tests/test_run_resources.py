"""A reply run holds no transaction while the provider or a tool works, and always saves its turn."""
import sqlite3
import time

import pytest

from webapp.agent.loop import FALLBACK_ERROR, run_turn
from webapp.extensions import db
from webapp.llm import get_provider, is_offline
from webapp.llm.messages import validate_turn
from webapp.models import Conversation, Turn
from webapp.storage import create_conversation, start_turn

from .support import use_provider
from .fakes.scripted_model import ScriptedModel


def database_is_writable(app) -> bool:
    """Whether another writer could take SQLite's write lock right now."""
    path = app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///")
    probe = sqlite3.connect(path, timeout=0)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.rollback()
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


class ProbingModel(ScriptedModel):
    """Looks at the database each time it is asked, as a slow provider's wait would find it."""
    def __init__(self, app, *replies):
        super().__init__(*replies)
        self.app, self.writable, self.in_transaction = app, [], []

    def stream(self, messages, tools):
        self.writable.append(database_is_writable(self.app))
        self.in_transaction.append(db.session().in_transaction())
        yield from super().stream(messages, tools)


def test_no_write_is_held_across_provider_calls_of_a_tool_turn(app, alex):
    model = ProbingModel(app, {"tool": "lookup_order", "arguments": {"order_id": 1042}},
                         "Order 1042 is on its way.")
    turn = start_turn(create_conversation(alex), "Where is order 1042?")
    list(run_turn(turn, model))
    assert model.writable == [True, True]  # after step 1 usage and after the tool's query
    assert model.in_transaction == [False, False]
    assert db.session.get(Turn, turn.id).outcome == "answered"


def test_the_token_ratio_is_saved_with_the_turn(app, alex):
    from webapp.llm.base import Reply

    class Counting(ScriptedModel):
        def stream(self, messages, tools):
            yield "Hi "
            yield Reply("Hi", usage={"prompt_tokens": 1000, "completion_tokens": 1})

    turn = start_turn(create_conversation(alex), "Hello")
    list(run_turn(turn, Counting()))
    db.session.expire_all()
    assert db.session.get(Conversation, turn.conversation_id).token_ratio != 1.0


def test_an_error_while_assembling_the_context_saves_the_polite_fallback(app, guest):
    use_provider(app, ScriptedModel("never asked"))
    conversation_id = guest.post("/messages", data={"message": "Hello"}).headers["HX-Push-Url"].rsplit("/", 1)[1]
    conversation = db.session.get(Conversation, conversation_id)
    conversation.strategy = "bogus"  # as an imported conversation may carry
    db.session.commit()
    body = guest.get(f"/c/{conversation_id}/turns/0/stream").text
    assert "event: done" in body and "having trouble" in body
    db.session.expire_all()
    turn = db.session.scalar(db.select(Turn).filter_by(conversation_id=conversation_id))
    assert turn.outcome == "api_error" and turn.answer == FALLBACK_ERROR
    assert validate_turn(turn.messages)
    again = guest.post(f"/c/{conversation_id}/messages", data={"message": "Still there?"})
    assert again.status_code == 200


def test_a_tool_that_breaks_saves_a_well_formed_fallback(app, alex, monkeypatch):
    from webapp.agent import loop

    def broken(name, context, arguments):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(loop, "run_tool", broken)
    model = ScriptedModel({"tool": "lookup_order", "arguments": {"order_id": 1042}})
    turn = start_turn(create_conversation(alex), "Where is order 1042?")
    events = list(run_turn(turn, model))
    assert events[-1].data == {"text": FALLBACK_ERROR, "fallback": True}
    saved = db.session.get(Turn, turn.id)
    assert saved.outcome == "api_error" and validate_turn(saved.messages)


def test_one_openai_client_serves_every_provider_of_the_process(app):
    app.config.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="test")
    assert get_provider(app.config).client is get_provider(app.config).client


@pytest.mark.parametrize("configured", [False, True])
def test_rendering_a_page_builds_no_provider(app, client, monkeypatch, configured):
    if configured:
        app.config.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    built = []
    monkeypatch.setattr("webapp.llm.openai_provider.OpenAIProvider.__init__",
                        lambda self, **kwargs: built.append(kwargs))
    assert client.get("/").status_code == 200
    assert built == [] and is_offline(app) is not configured


@pytest.mark.parametrize("path", ["/messages", "/c/{id}/messages"])
def test_a_busy_worker_refuses_a_send_politely_and_stores_nothing(app, guest, path):
    from .test_chat import count, start
    use_provider(app, ScriptedModel("Hello."))
    conversation_id, _ = start(guest, "First")
    b"".join(guest.get(f"/c/{conversation_id}/turns/0/stream").response)
    app.config["NIMBUS_MAX_RUNS"] = 0  # every slot of this worker is taken
    conversations, turns = count(Conversation), count(Turn)
    response = guest.post(path.format(id=conversation_id), data={"message": "Are you there?"},
                          headers={"HX-Request": "true"})
    assert response.status_code == 503 and response.headers["Retry-After"] == "3"
    assert "busy" in response.text and response.headers["HX-Retarget"].startswith("#composer-error")
    assert (count(Conversation), count(Turn)) == (conversations, turns)


def test_runs_beyond_the_limit_wait_for_a_slot_instead_of_failing(app, alex):
    import threading
    from webapp.runs.heartbeat import run_for
    from .fakes.paced_model import PacedModel
    app.config["NIMBUS_MAX_RUNS"] = 1
    gate = threading.Event()
    first = run_for(start_turn(create_conversation(alex), "One"), PacedModel("First one.", gate=gate))
    next(e for e in first.follow() if e is not None and e.kind == "token")
    second_model = PacedModel("Second one.")
    second = run_for(start_turn(create_conversation(alex), "Two"), second_model)
    time.sleep(0.3)
    assert second_model.requests == []  # queued behind the first
    gate.set()
    for run in (first, second):
        run.thread.join(10)
    assert len(second_model.requests) == 1


def test_a_burst_of_sends_is_counted_before_its_streams_start(app, guest):
    app.config["NIMBUS_MAX_RUNS"] = 2
    statuses = [guest.post("/messages", data={"message": f"Hi {i}"}).status_code
                for i in range(3)]
    assert statuses == [200, 200, 503]
