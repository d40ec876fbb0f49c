"""A summary fold and the distiller hold no transaction while the model works: a chat's write
from another connection goes through at once (SQLite file database, one write lock)."""
import threading
import time

from sqlalchemy import func, select, text

from webapp.context.summary.models import ConversationSummary
from webapp.context.summary.section import cached_summary, refresh_summary
from webapp.extensions import db
from webapp.llm.offline import OfflineModel
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.models import DistillCheckpoint, Memory
from webapp.models import Conversation
from webapp.storage import delete_conversation_for_good

from .support import ask
from .test_summaries import long_conversation, save


class HeldModel(OfflineModel):
    """The offline model, held inside its call until the test lets it answer."""

    def __init__(self):
        self.called, self.release = threading.Event(), threading.Event()
        self.in_transaction: list[bool] = []

    def stream(self, messages, tools, **options):
        self.in_transaction.append(db.session().in_transaction())
        self.called.set()
        assert self.release.wait(10), "the test never let the model answer"
        yield from super().stream(messages, tools)


def in_background(app, work) -> threading.Thread:
    """Run `work()` in a worker thread with its own app context, and so its own session."""
    def run():
        with app.app_context():
            work()
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def rename_from_another_connection(app, conversation_id: str, title: str) -> float:
    """Seconds a write by another session took; SQLite's busy wait cut to 2 s so a held lock fails."""
    with app.app_context():
        db.session.execute(text("PRAGMA busy_timeout = 2000"))
        started = time.monotonic()
        try:
            db.session.get(Conversation, conversation_id).title = title
            db.session.commit()
            return time.monotonic() - started
        finally:
            db.session.rollback()
            db.session.execute(text("PRAGMA busy_timeout = 30000"))
            db.session.remove()


def while_the_model_is_held(app, conversation, work) -> tuple[HeldModel, float]:
    model = HeldModel()
    thread = in_background(app, lambda: work(model))
    try:
        assert model.called.wait(10), "the model was never asked"
        took = rename_from_another_connection(app, conversation.id, "Written meanwhile")
    finally:
        model.release.set()
        thread.join(10)
    return model, took


def test_a_first_fold_lets_another_connection_write_while_the_model_works(app, alex):
    conversation = long_conversation(alex)
    outcome = []
    model, took = while_the_model_is_held(app, conversation, lambda model: outcome.append(
        refresh_summary(db.session.get(Conversation, conversation.id), model)[1]))
    assert took < 1 and model.in_transaction == [False]
    db.session.expire_all()
    assert outcome == [True] and "Dara" in cached_summary(conversation).text
    assert db.session.get(Conversation, conversation.id).title == "Written meanwhile"


def test_a_fold_over_a_summary_edited_meanwhile_is_not_stored(app, alex):
    conversation = long_conversation(alex, turns=16)
    refresh_summary(conversation, OfflineModel())
    for n in range(6):  # more turns fall off: the next fold starts from the stored summary
        save(conversation, f"More small talk {n} " + "y" * 80)
    covered = cached_summary(conversation).through_seq
    model = HeldModel()
    thread = in_background(app, lambda: refresh_summary(
        db.session.get(Conversation, conversation.id), model))
    assert model.called.wait(10)
    with app.app_context():  # a hand edit lands while the model folds
        cached_summary(db.session.get(Conversation, conversation.id)).text = "Edited by hand: Dara."
        db.session.commit()
        db.session.remove()
    model.release.set()
    thread.join(10)
    db.session.expire_all()
    summary = cached_summary(conversation)
    assert len(model.in_transaction) == 2 and summary.through_seq > covered
    assert "Edited by hand: Dara." in summary.text  # folded again from the edit, never over it


def test_the_distiller_lets_another_connection_write_while_the_model_works(app, alex):
    _, conversation, _ = ask(alex, "I prefer email over phone.")
    outcome = []
    model, took = while_the_model_is_held(app, conversation, lambda model: outcome.append(
        distil_conversation(conversation.id, provider=model)))
    assert took < 1 and model.in_transaction == [False]
    assert outcome == ["wrote 1 memory"]
    db.session.expire_all()
    assert db.session.get(DistillCheckpoint, conversation.id).distilled_through_seq == 0


def delete_from_another_connection(app, conversation_id: str) -> None:
    with app.app_context():
        delete_conversation_for_good(db.session.get(Conversation, conversation_id))
        db.session.remove()


def test_a_conversation_deleted_during_its_fold_is_left_deleted(app, alex):
    conversation = long_conversation(alex)
    model, outcome = HeldModel(), []
    thread = in_background(app, lambda: outcome.append(refresh_summary(
        db.session.get(Conversation, conversation.id), model)))
    assert model.called.wait(10)
    delete_from_another_connection(app, conversation.id)
    model.release.set()
    thread.join(10)
    db.session.expire_all()
    assert outcome == [(None, True)]
    assert db.session.scalar(select(func.count()).select_from(ConversationSummary)) == 0


def test_the_distiller_writes_nothing_for_a_conversation_deleted_while_it_read(app, alex):
    _, conversation, _ = ask(alex, "I prefer email over phone.")
    model, outcome = HeldModel(), []
    thread = in_background(app, lambda: outcome.append(
        distil_conversation(conversation.id, provider=model)))
    assert model.called.wait(10)
    delete_from_another_connection(app, conversation.id)
    model.release.set()
    thread.join(10)
    assert outcome == ["gone: the conversation was deleted"]
    assert db.session.scalar(select(func.count()).select_from(Memory)) == 0


def test_a_distiller_pass_whose_checkpoint_moved_meanwhile_writes_nothing(app, alex):
    _, conversation, _ = ask(alex, "I prefer email over phone.")
    model, outcome = HeldModel(), []
    thread = in_background(app, lambda: outcome.append(
        distil_conversation(conversation.id, provider=model)))
    assert model.called.wait(10)
    with app.app_context():  # another pass (or an import) marks the turns read meanwhile
        db.session.add(DistillCheckpoint(conversation_id=conversation.id, distilled_through_seq=0,
                                         last_outcome="read elsewhere"))
        db.session.commit()
        db.session.remove()
    model.release.set()
    thread.join(10)
    assert outcome[0].startswith("changed meanwhile")
    assert db.session.scalar(select(func.count()).select_from(Memory)) == 0
