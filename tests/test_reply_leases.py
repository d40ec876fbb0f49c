"""Leases: Stop seen from any worker on every turn kind, words checkpointed, dead runs taken over."""
import re
import threading
import time

import pytest
from sqlalchemy import func, insert, select

from webapp import create_app
from webapp.accounts import seed_demo
from webapp.agent.loop import partial_messages
from webapp.runs.heartbeat import stop_heartbeat
from webapp.database import create_schema
from webapp.extensions import db
from webapp.llm.base import ChatProvider, Reply, ToolCall
from webapp.llm.messages import assistant_message, tool_message, user_message, validate_turn
from webapp.locks import acquire, conversation_lock_name
from webapp.models import StopRequest, Turn, utcnow
from webapp.shop.models import Ticket

from .support import make_app, sse_events, use_provider, wait_for_replies
from .fakes.paced_model import PacedModel
from .test_chat import start

FAST_LEASES = {"NIMBUS_LEASE_SECONDS": 1.0, "NIMBUS_HEARTBEAT_SECONDS": 0.2,
               "NIMBUS_STOP_POLL_SECONDS": 0.1}
WORDS = " ".join(f"word{i}" for i in range(400))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def any_app(request, tmp_path, migrated_database):
    """The app on SQLite (a copy of the migrated template) or on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        import shutil
        shutil.copy(migrated_database, tmp_path / "nimbus.db")
        app = make_app(tmp_path / "nimbus.db")
    else:
        url = request.getfixturevalue("postgres_url")
        app = create_app({"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": url})
    app.config.update(FAST_LEASES)
    with app.app_context():
        if request.param == "postgresql":
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        yield app
        wait_for_replies(app)
        stop_heartbeat(app)
        db.session.remove()
        db.engine.dispose()


def browser(app):
    client = app.test_client()
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', client.get("/").text).group(1)
    client.environ_base["HTTP_X_CSRFTOKEN"] = token
    return client


def stored(turn_id) -> Turn:
    db.session.rollback()
    return db.session.get(Turn, turn_id)


def read_until(response, marker: bytes) -> bytes:
    received, chunks = b"", iter(response.response)
    while marker not in received:
        received += next(chunks)
    return received


def test_stop_pressed_on_another_worker_ends_a_tool_turn(any_app):
    use_provider(any_app, PacedModel(WORDS, delay=0.01,
                                     tool={"name": "lookup_order", "arguments": {"order_id": 1042}}))
    guest = browser(any_app)
    conversation_id, _ = start(guest, "Where is order 1042?")
    stream = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    read_until(stream, b"event: token")  # the tool ran; the answer is being written
    turn_id = db.session.scalar(select(Turn.id).filter_by(conversation_id=conversation_id))
    db.session.commit()
    with db.engine.begin() as other_worker:  # Stop pressed on a worker that does not run it
        other_worker.execute(insert(StopRequest).values(turn_id=turn_id, created_at=utcnow()))
    events = sse_events(b"".join(stream.response).decode())
    assert events[-1][0] == "done" and ">Stopped<" in events[-1][1]
    turn = stored(turn_id)
    assert turn.outcome == "interrupted" and validate_turn(turn.messages)
    assert [m["role"] for m in turn.messages] == ["user", "assistant", "tool", "assistant"]
    assert "word399" not in turn.answer and turn.answer.endswith(" …")


def test_the_words_written_so_far_are_checkpointed_while_the_run_goes(any_app):
    gate = threading.Event()
    use_provider(any_app, PacedModel("Half said and then more.", gate=gate))
    guest = browser(any_app)
    conversation_id, _ = start(guest, "Hello")
    stream = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    read_until(stream, b"event: token")
    turn_id = db.session.scalar(select(Turn.id).filter_by(conversation_id=conversation_id))
    deadline = time.monotonic() + 10
    while len(stored(turn_id).messages) == 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    turn = stored(turn_id)
    assert turn.outcome == "pending" and turn.messages[-1]["content"] == "Half …"
    gate.set()
    b"".join(stream.response)
    assert stored(turn_id).answer == "Half said and then more."


def orphan(app, conversation_id: str, messages: list[dict]) -> int:
    """A pending turn whose worker was killed: its checkpoint stored, its lease left to run out."""
    turn = db.session.scalar(select(Turn).filter_by(conversation_id=conversation_id))
    turn.messages = messages
    db.session.commit()
    acquire(conversation_lock_name(conversation_id), ttl=app.config["NIMBUS_LEASE_SECONDS"])
    return turn.id


def killed_mid_tool_turn() -> list[dict]:
    call = {"id": "call_1", "name": "lookup_order", "arguments": {"order_id": 1042}}
    return partial_messages([user_message("Where is order 1042?"), assistant_message("", [call]),
                             tool_message("call_1", "lookup_order", {"status": "paid"})],
                            ["Order ", "1042 ", "is "])


def test_a_reconnecting_stream_closes_a_dead_run_s_turn_with_its_words(any_app):
    model = use_provider(any_app, PacedModel("Never asked."))
    guest = browser(any_app)
    conversation_id, _ = start(guest, "Where is order 1042?")
    turn_id = orphan(any_app, conversation_id, killed_mid_tool_turn())
    events = sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text)
    assert [name for name, _ in events] == ["done"] and "Order 1042 is …" in events[0][1]
    turn = stored(turn_id)
    assert turn.outcome == "interrupted" and turn.answer == "Order 1042 is …"
    assert validate_turn(turn.messages) and model.requests == []
    assert guest.post(f"/c/{conversation_id}/messages", data={"message": "Thanks"}).status_code == 200


def test_the_next_send_closes_a_turn_whose_worker_died(any_app):
    use_provider(any_app, PacedModel("Fine."))
    guest = browser(any_app)
    conversation_id, _ = start(guest, "Where is order 1042?")
    turn_id = orphan(any_app, conversation_id, killed_mid_tool_turn())
    refused = guest.post(f"/c/{conversation_id}/messages", data={"message": "Hello?"})
    assert refused.status_code == 409  # the lease still runs: its worker may be alive
    time.sleep(1.3)  # the lease ran out and nobody renewed it
    sent = guest.post(f"/c/{conversation_id}/messages", data={"message": "Hello?"})
    assert sent.status_code == 200
    assert stored(turn_id).outcome == "interrupted" and stored(turn_id).answer == "Order 1042 is …"


def test_another_worker_s_heartbeat_answers_a_turn_nobody_started(app, guest):
    app.config.update(FAST_LEASES)
    use_provider(app, PacedModel("Answered by another worker."))
    conversation_id, _ = start(guest, "Hello")  # its stream never opened: the browser closed
    other, _ = start(guest, "Something else")
    b"".join(guest.get(f"/c/{other}/turns/0/stream").response)  # this worker beats meanwhile
    deadline = time.monotonic() + 15
    turn = db.session.scalar(select(Turn).filter_by(conversation_id=conversation_id))
    while stored(turn.id).outcome == "pending" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stored(turn.id).answer == "Answered by another worker."


class SilentFirst(ChatProvider):
    """A provider whose first call says nothing until `gate` opens (a slow first token), then
    asks for a ticket; every later call answers at once."""
    name, model, offline = "silent-first test model", "silent", True

    def __init__(self):
        self.gate, self.waiting, self.calls = threading.Event(), threading.Event(), 0

    def stream(self, messages, tools):
        self.calls += 1
        if self.calls == 1:
            self.waiting.set()
            assert self.gate.wait(20), "the test never opened the gate"
            yield Reply("", [ToolCall("call_1", "create_support_ticket",
                                      {"category": "other", "summary": "late"})])
            return
        yield "Hello again."
        yield Reply("Hello again.")


def test_stop_before_the_first_token_saves_at_once_and_the_late_reply_writes_nothing(any_app):
    model = use_provider(any_app, SilentFirst())
    guest = browser(any_app)
    conversation_id, _ = start(guest, "Open a ticket, please.")
    stream = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    next(iter(stream.response))
    assert model.waiting.wait(10)  # the run waits on the provider's first token
    started = time.monotonic()
    stopped = guest.post(f"/c/{conversation_id}/turns/0/stop")
    assert stopped.status_code == 200 and ">Stopped<" in stopped.text
    assert time.monotonic() - started < 5
    sent = guest.post(f"/c/{conversation_id}/messages", data={"message": "Hello?"})
    assert sent.status_code == 200  # not "still answering": the next message goes through
    assert "Hello again." in guest.get(f"/c/{conversation_id}/turns/1/stream").text
    model.gate.set()  # the slow first reply arrives after all, asking for a ticket
    wait_for_replies(any_app)
    first = db.session.scalar(select(Turn).filter_by(conversation_id=conversation_id, seq=0))
    db.session.refresh(first)
    assert first.outcome == "interrupted" and validate_turn(first.messages)
    assert db.session.scalar(select(func.count()).select_from(Ticket)) == 0  # never opened


def test_stop_during_a_slow_tool_waits_for_its_result_and_keeps_it(any_app, monkeypatch):
    from webapp.agent import loop
    entered, gate, real_tool = threading.Event(), threading.Event(), loop.run_tool

    def slow_tool(name, context, arguments):
        entered.set()
        assert gate.wait(20), "the test never opened the gate"
        return real_tool(name, context, arguments)

    monkeypatch.setattr(loop, "run_tool", slow_tool)
    use_provider(any_app, PacedModel(WORDS, tool={"name": "create_support_ticket",
                                                  "arguments": {"category": "other",
                                                                "summary": "late"}}))
    guest = browser(any_app)
    conversation_id, _ = start(guest, "Open a ticket, please.")
    stream = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    next(iter(stream.response))
    assert entered.wait(10)  # the tool is running
    turn_id = db.session.scalar(select(Turn.id).filter_by(conversation_id=conversation_id))
    db.session.commit()
    with db.engine.begin() as other_worker:
        other_worker.execute(insert(StopRequest).values(turn_id=turn_id, created_at=utcnow()))
    time.sleep(2 * FAST_LEASES["NIMBUS_STOP_POLL_SECONDS"] + 1.5)  # past the heartbeat's grace
    assert stored(turn_id).outcome == "pending"  # not saved over the running tool
    gate.set()
    b"".join(stream.response)
    turn = stored(turn_id)
    assert turn.outcome == "interrupted" and validate_turn(turn.messages)
    assert [m["role"] for m in turn.messages][:3] == ["user", "assistant", "tool"]
    assert db.session.scalar(select(func.count()).select_from(Ticket)) == 1  # and it says so
