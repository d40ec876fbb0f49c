"""A busy customer's conversation search on PostgreSQL: a word held by many of their turns is
found by walking their turns newest first on ix_turns_owner_newest (migration 0042), not by
fetching and sorting every hit the GIN index hands over, and the search finds the same rows with
the same scores as the GIN index alone."""
import re
from dataclasses import replace

import pytest
from sqlalchemy import event, insert, text

from webapp import create_app
from webapp.accounts import find_user, seed_demo
from webapp.database import create_schema
from webapp.extensions import db
from webapp.memories.search import keywords, statements
from webapp.memories.search.keyword_tables import owned_turns
from webapp.models import Turn, User
from webapp.storage import create_conversation

from .test_memory_postgres import generic_plan

pytestmark = pytest.mark.slow  # needs PostgreSQL

QUESTIONS = ["parcel", "kettle", "lamp", "where is my parcel", "the kettle and the lamp",
             "refund for the parcel", "nothing matches zebra", "parcel kettle lamp refund"]


def turn_text(i: int) -> str:
    """Words in shares: parcel in 2 of 5 turns, kettle in 1 of 4, refund 1 of 7, lamp 1 of 50."""
    return " ".join(word for word, held in (("parcel", i % 5 in (0, 2)), ("kettle", i % 4 == 0),
                                            ("refund", i % 7 == 0), ("lamp", i % 50 == 0))
                    if held) + f" note {i}"


def fill(busy, quiet, others) -> None:
    """2,000 turns of the busy customer among 6,000 of others, interleaved; 20 of the quiet one."""
    rows = []
    for person, count in ((busy, 2000), (quiet, 20), *((o, 600) for o in others)):
        conversation = create_conversation(person).id
        rows += [{"conversation_id": conversation, "seq": i, "messages": [], "compact": [],
                  "outcome": "answered", "question": turn_text(i), "answer": f"answer {i}"}
                 for i in range(count)]
    rows.sort(key=lambda row: row["seq"])  # the shop's turns interleaved, as they are written
    db.session.execute(insert(Turn), rows)
    db.session.commit()
    db.session.execute(text("ANALYZE"))


@pytest.fixture
def busy_shop(postgres_url):
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url})
    with app.app_context():
        try:
            create_schema()
            seed_demo("demo")
            alex, sam = find_user("alex@example.com"), find_user("sam@example.com")
            others = [User(tenant_id=alex.tenant_id, email=f"c{i}@shop.test", name=f"C{i}")
                      for i in range(10)]
            db.session.add_all(others)
            db.session.commit()
            fill(alex, sam, others)
            yield alex, sam
        finally:
            db.session.remove()
            db.engine.dispose()


def statements_run(call) -> list[tuple[str, dict]]:
    found = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        found.append((statement, dict(parameters or {})))
    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        call()
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
    return found


def test_a_busy_customers_common_word_walks_their_turns_newest_first(busy_shop):
    alex, sam = busy_shop
    run = statements_run(lambda: keywords.turn_scores(alex, "parcel", 40))
    walked = [(statement, values) for statement, values in run if "search_words" in statement]
    assert len(walked) == 1
    # as psycopg runs a statement it has prepared: planned once, without its values
    db.session.execute(text("SET plan_cache_mode = force_generic_plan"))
    plan = generic_plan(*walked[0])
    # read only above an id (the person written in: on their index or the shop's, as the
    # planner finds cheaper), no plan reads every turn of theirs
    assert "ix_turns_fulltext" not in plan, plan
    assert re.search(r"Index Cond: \(.*id > \(?\$\d+", plan), plan
    # a word few of the person's turns hold, and a quiet customer's, still ask the GIN index
    for person, word in ((alex, "lamp"), (sam, "parcel")):
        run = statements_run(lambda: keywords.turn_scores(person, word, 40))
        assert not any("search_words" in statement for statement, _ in run), (person.email, word)


def test_the_estimate_past_the_cap_walks_the_persons_newest_turns(busy_shop, monkeypatch):
    """A capped word's COUNT_CAP-th newest hit is found by walking the person's newest turns
    (ix_turns_owner_newest, each tested on its kept words) and stopping there, not by fetching
    and sorting every hit through the GIN index: so also in a plan made without the values."""
    alex, _ = busy_shop
    monkeypatch.setattr(statements, "STATEMENTS", {})
    monkeypatch.setattr(keywords, "COUNT_CAP", 100)
    counted = replace(keywords.turns_indexed(alex), kept_counts=False)  # as for a split word
    run = statements_run(lambda: keywords.scored(counted, "parcel kettle", 40,
                                                 keywords.asked_and_answered))
    estimate = [(statement, values) for statement, values in run if "row_number" in statement]
    assert estimate, [statement for statement, _ in run]
    db.session.execute(text("SET plan_cache_mode = force_generic_plan"))
    plan = generic_plan(*estimate[0])
    # no hit fetched through the GIN index; the turns read only above an id written in
    assert "ix_turns_fulltext" not in plan, plan
    assert re.search(r"Cond: .*id > \d+\)", plan), plan
    assert "Run Condition" in plan, plan  # stopping at the word's 100th hit


@pytest.mark.parametrize("window", [1000, 300])
def test_a_walk_finds_what_the_gin_index_found(busy_shop, monkeypatch, window):
    """The same rows and scores, to the bit, as the GIN index alone and the estimate's window
    counted on the shop's ids (counts capped low, so the estimate past the cap runs too; with
    a window of 300 rows some words' 100th hit lies beyond it)."""
    monkeypatch.setattr(statements, "STATEMENTS", {})  # the limits are written into them
    monkeypatch.setattr(keywords, "COUNT_CAP", 100)
    monkeypatch.setattr(keywords, "ESTIMATE_WINDOW", window)
    for person in busy_shop:
        indexed = replace(keywords.turns_indexed(person), kept_counts=False)  # counted, estimated
        before = replace(indexed, walked=None, ranged=owned_turns, form=None)
        for question in QUESTIONS:
            found = keywords.scored(indexed, question, 40, keywords.asked_and_answered)
            walked = keywords.scored(before, question, 40, keywords.asked_and_answered)
            assert found[0] == walked[0], (person.email, question)
            assert list(found[1]) == list(walked[1])
