"""A person's word counts kept by PostgreSQL (migration 0043): a search reads how many of their
turns hold a word instead of counting its hits, so the counts must follow every write: new and
finished turns, an imported batch, an edit, a deleted turn, a conversation hidden, restored and
purged. Each is checked against the count through the full-text index itself."""
import importlib.util
import os
from dataclasses import replace

import pytest
from flask_migrate import upgrade
from sqlalchemy import delete, insert, text, update

from webapp import create_app
from webapp.accounts import find_user, seed_demo
from webapp.accounts.personal_data import delete_user_data
from webapp.database import MIGRATIONS, create_schema
from webapp.extensions import db
from webapp.memories.search import keywords, statements
from webapp.memories.search.word_counts import KEPT_COUNTS_DDL
from webapp.models import Conversation, Turn
from webapp.storage import (create_conversation, delete_conversation_for_good, mark_deleted,
                            purge_deleted, restore_conversation, start_turn)

pytestmark = pytest.mark.slow  # needs PostgreSQL

WORDS = ["parcel", "kettle", "lamp", "refund", "boiler", "answer", "note", "parcels", "the",
         "zebra", "foo_bar"]


@pytest.fixture
def shop(postgres_url, monkeypatch):
    monkeypatch.setattr(statements, "STATEMENTS", {})  # the cap is written into them
    monkeypatch.setattr(keywords, "COUNT_CAP", 10**9)  # counted through the index, uncapped
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url})
    with app.app_context():
        try:
            create_schema()
            seed_demo("demo")
            yield find_user("alex@example.com"), find_user("sam@example.com")
        finally:
            db.session.remove()
            db.engine.dispose()


def counts(person, kept: bool) -> dict:
    indexed = replace(keywords.turns_indexed(person), kept_counts=kept, key=None)
    return keywords.statistics(indexed, WORDS, []).holding


def assert_counts_right(*people) -> None:
    for person in people:
        assert counts(person, True) == counts(person, False), person.email


def imported(person, texts: list[str], outcome: str = "answered") -> Conversation:
    """A conversation with finished turns written in one statement, as an import stores them."""
    conversation = create_conversation(person)
    db.session.execute(insert(Turn), [
        {"conversation_id": conversation.id, "seq": i, "messages": [], "compact": [],
         "outcome": outcome, "question": question, "answer": "answer"}
        for i, question in enumerate(texts)])
    db.session.commit()
    return conversation


def test_kept_counts_follow_every_write_of_a_persons_turns(shop):
    alex, sam = shop
    first = imported(alex, ["parcel kettle", "parcel lamp", "the parcels", "kettle foo_bar"])
    other = imported(sam, ["parcel", "boiler refund"])
    assert counts(alex, True)["parcel"] == 3
    assert_counts_right(alex, sam)

    asked = start_turn(first, "a pending refund for the parcel")  # pending: not searched yet
    assert_counts_right(alex)
    asked.answer, asked.outcome = "refund sent", "answered"  # finished
    db.session.commit()
    assert counts(alex, True)["refund"] == 1
    assert_counts_right(alex)

    db.session.execute(update(Turn).where(Turn.conversation_id == first.id, Turn.seq == 0)
                       .values(question="boiler"))  # edited
    db.session.execute(update(Turn).where(Turn.conversation_id == first.id)
                       .values(heartbeat_at=None))  # a write that changes no words
    db.session.execute(delete(Turn).where(Turn.conversation_id == first.id, Turn.seq == 1))
    db.session.commit()
    assert_counts_right(alex, sam)

    mark_deleted(first)  # hidden
    assert counts(alex, True)["parcel"] == 0
    assert_counts_right(alex)
    restore_conversation(first)
    assert_counts_right(alex)
    mark_deleted(first)
    db.session.execute(update(Conversation).where(Conversation.id == first.id)
                       .values(deleted_at=Conversation.deleted_at - text("interval '1 day'")))
    db.session.commit()
    assert purge_deleted(alex, 60) == 1  # purged after its undo window
    second = imported(alex, ["lamp kettle", "lamp"])
    delete_conversation_for_good(second)  # deleted outright, never hidden
    assert_counts_right(alex, sam)
    assert counts(sam, True)["boiler"] == 1 and other.id
    # a word none of their turns holds any more leaves no row behind
    assert db.session.scalar(text("SELECT count(*) FROM turn_word_rows WHERE turns <= 0")) == 0


def test_a_deleted_account_leaves_none_of_its_words(shop):
    alex, sam = shop
    imported(alex, ["parcel kettle"])
    mark_deleted(imported(sam, ["secret boiler"]))  # hidden, then the account goes
    imported(sam, ["private lamp"])
    sam_id = sam.id
    delete_user_data(sam, "test")
    db.session.commit()
    assert db.session.scalar(text("SELECT count(*) FROM turn_word_rows WHERE owner_id = :id"),
                             {"id": sam_id}) == 0
    assert_counts_right(alex)


def test_a_search_ranks_with_kept_counts_as_with_counted_ones(shop):
    """The same scores and rows, to the bit, as counting every hit through the index."""
    alex, _ = shop
    imported(alex, [f"parcel {'kettle' if i % 3 else 'lamp'} note {i}" for i in range(60)])
    imported(alex, ["refund for the kettle", "zebra"], outcome="pending")
    for question in ["parcel", "kettle lamp", "where is my parcels refund", "foo_bar kettle",
                     "the", "zebra"]:
        indexed = keywords.turns_indexed(alex)
        kept = keywords.scored(indexed, question, 40, keywords.asked_and_answered)
        counted = keywords.scored(replace(indexed, kept_counts=False), question, 40,
                                  keywords.asked_and_answered)
        assert kept[0] == counted[0], question
        assert list(kept[1]) == list(counted[1]), question


def test_the_migrations_kept_counts_ddl_is_the_apps():
    """Migration 0043 carries its own copy of the table and triggers: a database the
    migrations made keeps its counts as one create_all made."""
    path = os.path.join(MIGRATIONS, "versions", "0043_kept_turn_word_counts.py")
    spec = importlib.util.spec_from_file_location("kept_counts_migration", path)
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    assert [migration.TABLE, *migration.TRIGGERS] == KEPT_COUNTS_DDL


def test_upgrading_counts_the_turns_already_stored(postgres_url, monkeypatch):
    monkeypatch.setattr(statements, "STATEMENTS", {})
    monkeypatch.setattr(keywords, "COUNT_CAP", 10**9)
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url})
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision="0042_turn_words_walked_by_owner")
            seed_demo("demo")
            alex, sam = find_user("alex@example.com"), find_user("sam@example.com")
            imported(alex, ["parcel kettle", "parcel lamp", "the parcels", "kettle foo_bar"])
            mark_deleted(imported(alex, ["parcel hidden"]))
            imported(sam, ["parcel", "boiler refund"])
            imported(alex, ["a refund pending"], outcome="pending")
            db.session.remove()
            upgrade(directory=MIGRATIONS)
            alex, sam = find_user("alex@example.com"), find_user("sam@example.com")
            assert counts(alex, True)["parcel"] == 3
            assert_counts_right(alex, sam)
        finally:
            db.session.remove()
            db.engine.dispose()
