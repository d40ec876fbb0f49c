"""A partial import stores each conversation whole or not at all: a failure while writing keeps
the conversations committed before it and leaves no turn of the one it stopped in."""
import pytest

from webapp.extensions import db
from webapp.models import Conversation, Turn
from webapp.transfer import batch
from webapp.transfer.formats import parse

CHATS = [{"messages": [{"role": "user", "content": f"Question {n}"},
                       {"role": "assistant", "content": f"Answer {n}"}]} for n in range(3)]


def test_a_failure_while_writing_keeps_the_conversations_before_it_whole(alex, monkeypatch):
    from webapp.transfer.loading import JsonLines
    checked = parse(JsonLines(CHATS))
    real_write, calls = batch.write_many, []

    def write_then_fail(some, user):
        calls.append(some)
        if len(calls) == 3:
            real_write(some, user)
            db.session.flush()  # its turns are in the transaction when the failure comes
            raise RuntimeError("the disk is full")
        return real_write(some, user)
    monkeypatch.setattr(batch, "write_many", write_then_fail)
    monkeypatch.setattr(batch, "WRITE_BATCH", 1)
    before = db.session.query(Conversation).count()
    with pytest.raises(RuntimeError):
        batch.import_each(checked, alex)
    stored = db.session.query(Conversation).order_by(Conversation.id).all()
    assert len(stored) == before + 2
    questions = {t.question for t in db.session.query(Turn).all()}
    assert {"Question 0", "Question 1"} <= questions and "Question 2" not in questions


def test_the_summary_counts_what_was_imported_and_skipped():
    result = batch.ImportResult([Conversation(turn_count=2), Conversation(turn_count=1)],
                                ["line 3: not valid JSON — skipped"])
    assert result.summary == "Imported 2 conversations (3 turns); skipped 1 that could not be read."
    assert batch.ImportResult([Conversation(turn_count=1)]).summary == \
        "Imported 1 conversation (1 turn)."
