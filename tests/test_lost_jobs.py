"""Jobs queued while the queue was down are found and queued again once it is back: every turn
answered during the outage gets its vector from the minute's sweep, and a conversation whose
distillation was lost is read by the inactive sweep."""
from datetime import datetime, timedelta

import pytest
import redis

from webapp.extensions import db
from webapp.jobs import huey
from webapp.memories.jobs import sweep
from webapp.memories.search.lost_vectors import embed_turns_job, queue_lost_vectors, turns_without_vectors
from webapp.memories.models import DistillCheckpoint, TurnVector
from webapp.models import Turn, utcnow

from .support import ask

LATER = timedelta(minutes=1)  # past SETTLE: a turn's own job has had its moment


@pytest.fixture
def searching(app):
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    return app.config


class Outage:
    """Every enqueue fails as it does while Redis is stopped, until end()."""

    def __init__(self, monkeypatch):
        def refused(task):
            raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        self.monkeypatch = monkeypatch
        monkeypatch.setattr(huey, "enqueue", refused)

    def end(self):
        self.monkeypatch.undo()


@pytest.fixture
def queue_down(monkeypatch):
    return Outage(monkeypatch)


def vectors() -> set[int]:
    db.session.expire_all()
    return set(db.session.scalars(db.select(TurnVector.turn_id)))


def test_turns_answered_while_the_queue_was_down_get_their_vectors_from_the_sweep(
        app, alex, searching, queue_down):
    _, conversation, _ = ask(alex, "My parcel should go to the back door.")
    ask(alex, "The espresso grinder arrived broken.", conversation)
    assert vectors() == set()  # each turn's embedding job was lost, and the reply still came
    queue_down.end()
    assert queue_lost_vectors(searching, now=utcnow() + LATER) == 2
    assert vectors() == {turn.id for turn in conversation.turns}


def test_a_second_sweep_queues_nothing_and_a_repeated_batch_embeds_nothing(
        app, alex, searching, queue_down):
    _, conversation, _ = ask(alex, "My parcel should go to the back door.")
    queue_down.end()
    assert queue_lost_vectors(searching, now=utcnow() + LATER) == 1
    assert queue_lost_vectors(searching, now=utcnow() + LATER) == 0
    assert embed_turns_job.call_local([conversation.turns[0].id]) == 0


def test_a_turn_just_answered_or_still_pending_is_left_to_its_own_job(
        app, alex, searching, queue_down):
    _, conversation, _ = ask(alex, "My parcel should go to the back door.")
    assert turns_without_vectors() == []  # finished a moment ago: its job may still be queued
    pending = Turn(conversation_id=conversation.id, seq=1, messages=[], compact=[],
                   question="And the front?", heartbeat_at=None)
    db.session.add(pending)
    db.session.commit()
    assert turns_without_vectors(now=utcnow() + LATER) == [conversation.turns[0].id]


def test_with_search_off_the_sweep_queues_nothing(app, alex, queue_down):
    ask(alex, "My parcel should go to the back door.")
    queue_down.end()
    assert queue_lost_vectors(app.config, now=utcnow() + LATER) == 0


def test_the_worker_runs_the_vector_sweep_every_minute(app):
    due = [t.name for t in huey.read_periodic(datetime(2026, 1, 1, 10, 7))]
    assert "queue_lost_vectors" in due


def test_a_distillation_lost_with_the_queue_is_read_by_the_inactive_sweep(app, alex, queue_down):
    app.config.update(NIMBUS_HISTORY_BUDGET=150, NIMBUS_MEMORY_MIN_MESSAGES=4)
    _, conversation, _ = ask(alex, "I prefer email over phone.")
    for question in ("I always pay by card.", "Thanks! " + "A long message. " * 40, "Hi"):
        ask(alex, question, conversation)  # the last plans dropped turns: a distil job, lost
    assert db.session.get(DistillCheckpoint, conversation.id) is None
    queue_down.end()
    conversation.updated_at = utcnow() - timedelta(minutes=31)
    db.session.commit()
    assert sweep(app.config) == [(conversation.id, "queued")]
    db.session.expire_all()
    assert db.session.get(DistillCheckpoint, conversation.id).distilled_through_seq == 3


def test_jobs_refused_while_redis_was_down_are_queued_by_the_next_enqueue(
        app, alex, searching, queue_down):
    _, conversation, _ = ask(alex, "My parcel should go to the back door.")
    assert vectors() == set()
    queue_down.end()
    ask(alex, "The espresso grinder arrived broken.", conversation)  # its job gets through
    assert vectors() == {turn.id for turn in conversation.turns}  # no sweep needed
