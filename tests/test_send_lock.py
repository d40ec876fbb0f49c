"""A send's "nothing pending, so store the question" holds the conversation's lock for one commit:
two sends at once store one question, a send waits for a lock another worker holds, and no
lock row is left behind."""
import threading
import time

from sqlalchemy import func, select
from sqlalchemy.event import listen, remove

from webapp.chat.views import store_question
from webapp.extensions import db
from webapp.locks import acquire, conversation_lock_name, release
from webapp.models import Conversation, Lock, Turn
from webapp.storage import create_conversation
from webapp.accounts import find_user

from .test_reply_leases import any_app  # noqa: F401  (the fixture: SQLite and PostgreSQL)


def send_from_another_worker(app, conversation_id, question, results, ready):
    with app.app_context():
        conversation = db.session.get(Conversation, conversation_id)
        ready.wait()
        turn = store_question(conversation, question)
        results.append(None if turn is None else turn.seq)
        db.session.remove()


def locks_left() -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(Lock))


def test_two_sends_at_once_store_one_question(any_app):
    conversation_id = create_conversation(find_user("alex@example.com")).id
    results, ready = [], threading.Barrier(2)
    senders = [threading.Thread(target=send_from_another_worker,
                                args=(any_app, conversation_id, q, results, ready))
               for q in ("From the first tab", "From the second tab")]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(30)
    assert sorted(results, key=str) == [0, None]  # one stored as turn 0, one refused
    assert db.session.scalar(select(func.count()).select_from(Turn).where(
        Turn.conversation_id == conversation_id)) == 1
    assert locks_left() == 0


def test_a_send_waits_for_the_lock_another_worker_holds(any_app):
    conversation = create_conversation(find_user("alex@example.com"))
    held = acquire(conversation_lock_name(conversation.id))  # a branch being rewritten elsewhere

    def let_go():
        with any_app.app_context():
            time.sleep(0.5)
            release(held)
            db.session.remove()

    releaser = threading.Thread(target=let_go)
    releaser.start()
    started = time.monotonic()
    turn = store_question(conversation, "Sent while the branch was changing")
    releaser.join(10)
    assert turn is not None and turn.seq == 0 and turn.outcome == "pending"
    assert time.monotonic() - started >= 0.4  # it waited for the other worker, not past it
    assert locks_left() == 0


def test_a_send_stores_its_question_and_its_lock_in_one_commit(app, alex):
    """Each commit may wait behind an import's batch: a send makes one, not three."""
    conversation = create_conversation(alex)
    commits = []

    def count(connection):
        commits.append(1)

    listen(db.engine, "commit", count)
    try:
        turn = store_question(conversation, "Where is my order #1043?")
    finally:
        remove(db.engine, "commit", count)
    assert turn.seq == 0 and len(commits) == 1
    assert locks_left() == 0
