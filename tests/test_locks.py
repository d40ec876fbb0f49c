"""Locks keep two workers off one conversation, in the database or in Redis."""
import threading
import time

import pytest
import redis

from webapp.locks import LockBusy, acquire, conversation_lock, named_lock

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture(params=["database", "redis"])
def backend(request, app):
    if request.param == "redis":
        redis.Redis.from_url(REDIS_URL).ping()  # the scale path needs a running Redis
        app.config["REDIS_URL"] = REDIS_URL
    yield request.param
    app.config["REDIS_URL"] = None


def test_a_held_lock_refuses_a_second_taker(backend):
    with named_lock("job:1", wait=0):
        with pytest.raises(LockBusy):
            with named_lock("job:1", wait=0):
                pass
    with named_lock("job:1", wait=0):
        pass  # released after the block


def test_a_waiting_taker_gets_the_lock_when_it_is_released(app, backend):
    order = []

    def second():
        with app.app_context():
            with conversation_lock("c1", wait=5):
                order.append("second")

    with conversation_lock("c1", wait=0):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"]


def test_a_lock_whose_holder_died_is_taken_over_when_its_lease_ends(app, backend):
    acquire("stale", ttl=1.0)  # its holder died: nobody renews or releases it
    with pytest.raises(LockBusy):  # (a lease of a second: a busy CI box is slow to ask again)
        acquire("stale")
    time.sleep(1.2)
    with named_lock("stale", wait=0):
        pass


def test_a_held_lock_is_renewed_beyond_its_lease(app, backend):
    with named_lock("long", wait=0, ttl=1.0):
        time.sleep(1.6)
        with pytest.raises(LockBusy):
            acquire("long")


def test_two_requests_to_one_conversation_never_interleave(app, alex):
    from webapp.agent.loop import run_turn
    from webapp.storage import all_turns, create_conversation, start_turn
    from .fakes.scripted_model import ScriptedModel

    class SlowModel(ScriptedModel):
        def stream(self, messages, tools):
            time.sleep(0.2)
            yield from super().stream(messages, tools)

    conversation_id = create_conversation(alex).id
    model = SlowModel("first answer", "second answer")

    def request(question):
        with app.app_context():
            from webapp.extensions import db
            from webapp.models import Conversation
            conversation = db.session.get(Conversation, conversation_id)
            with conversation_lock(conversation_id, wait=10):
                list(run_turn(start_turn(conversation, question), model))

    threads = [threading.Thread(target=request, args=(q,)) for q in ("one", "two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    turns = all_turns(conversation_id)
    assert [len(t.messages) for t in turns] == [2, 2]
    # The second request saw the whole first turn: its context held the first question and answer.
    second_request = model.requests[1]
    assert [m["content"] for m in second_request[1:]] == [
        turns[0].question, turns[0].answer, turns[1].question]
