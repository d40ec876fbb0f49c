"""Long-term memory on PostgreSQL: full-text keyword search, hybrid recall, isolation, retention."""
import re

import pytest
from sqlalchemy import text

from webapp import create_app
from webapp.accounts import find_user, get_or_create_tenant, get_or_create_user, seed_demo
from webapp.database import create_schema
from webapp.extensions import db
from webapp.memories.search.conversations import search_turns
from webapp.memories.search.recall import search
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.storage import create_conversation, delete_conversation_for_good

from .support import ask

pytestmark = pytest.mark.slow  # needs PostgreSQL


def test_memory_search_and_isolation_on_postgresql(postgres_url):
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url,
                      "NIMBUS_MEMORY_SEARCH": True, "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0})
    with app.app_context():
        try:
            create_schema()
            create_schema()  # idempotent: the full-text indexes are created once
            seed_demo("demo")
            alex, sam = find_user("alex@example.com"), find_user("sam@example.com")
            kim = get_or_create_user(get_or_create_tenant("acme"), "kim@acme.test", "Kim")
            db.session.commit()
            indexes = db.session.scalars(text(
                "SELECT indexname FROM pg_indexes WHERE indexname LIKE '%fulltext'")).all()
            assert sorted(indexes) == ["ix_memories_fulltext", "ix_turns_fulltext"]

            conversation = create_conversation(alex)
            remember(SessionScope.for_user(alex), "Alex's parcels go to the back door.",
                     app.config, source="tool", conversation_id=conversation.id, turn_seq=0)
            remember(SessionScope.for_user(kim), "Kim's parcels go to the back door.",
                     app.config, source="hand")
            found, mode = search(SessionScope.for_user(alex), "parcels", app.config)
            assert mode == "hybrid" and [m.content for m, _ in found] == [
                "Alex's parcels go to the back door."]
            assert "keyword rank 1" in found[0][1]
            assert search(SessionScope.for_user(sam), "parcels", app.config)[0] == []

            ask(alex, "Where is my parcel going?")
            results, _ = search_turns(alex, "parcel", app.config)
            assert len(results) == 1 and search_turns(sam, "parcel", app.config)[0] == []

            delete_conversation_for_good(conversation)
            db.session.expire_all()
            kept, _ = search(SessionScope.for_user(alex), "parcels", app.config)
            assert kept[0][0].conversation_id is None
        finally:
            db.session.remove()
            db.engine.dispose()


def test_keyword_ranking_on_postgresql_matches_sqlite(postgres_url):
    """Scores are computed in Python from the scope's counts, so both databases rank alike."""
    from datetime import datetime
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url,
                      "NIMBUS_MEMORY_SEARCH": False})
    with app.app_context():
        try:
            create_schema()
            seed_demo("demo")
            alex, sam = find_user("alex@example.com"), find_user("sam@example.com")
            _, first, _ = ask(alex, "My espresso grinder is broken, the espresso grinder burrs "
                                    "are stuck.")
            for i in range(3):
                ask(alex, f"Do you sell a grinder stand number {i}?")
                ask(sam, f"Espresso question {i}")
            results, mode = search_turns(alex, "espresso grinder", app.config)
            assert mode == "keywords" and len(results) == 4
            assert results[0]["question"].startswith("My espresso grinder")
            assert [r["question"][-2] for r in results[1:]] == ["2", "1", "0"]  # ties: newest
            first.turns[0].created_at = datetime(2026, 3, 14, 19, 30)
            db.session.commit()
            by_day, _ = search_turns(alex, "what did I say on March 14?", app.config)
            assert by_day[0]["conversation_id"] == first.id
        finally:
            db.session.remove()
            db.engine.dispose()


def test_words_are_found_through_the_full_text_indexes_on_postgresql(postgres_url):
    """What a search asks PostgreSQL for is what its GIN indexes hold, and the matches are sorted
    rather than found by walking the primary key newest first (which computed every row's
    tsvector: seconds over 10,000 turns). Planned as a prepared statement is, without its values,
    and with sequential scans off, a word's rows come from ix_turns_fulltext and
    ix_memories_fulltext."""
    from sqlalchemy import select
    from webapp.memories.search.keywords import holding, memories_indexed, scope_values, turns_indexed
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url})
    with app.app_context():
        try:
            create_schema()
            seed_demo("demo")
            alex = find_user("alex@example.com")
            many_rows_one_with_a_parcel(alex)
            db.session.execute(text("ANALYZE"))
            db.session.execute(text("SET enable_seqscan = off"))
            # as for a statement run many times (psycopg prepares it): planned without its values
            db.session.execute(text("SET plan_cache_mode = force_generic_plan"))
            scope = SessionScope(alex.tenant_id, alex.id)
            for indexed, index in [(turns_indexed(alex), "ix_turns_fulltext"), (
                    memories_indexed(scope.applies()), "ix_memories_fulltext"), (
                    memories_indexed(scope.applies(), values=scope.bound()[2]),  # with its tokens
                    "ix_memories_fulltext")]:
                rows, order = holding(indexed, select(indexed.id).select_from(indexed.id.table), "w")
                compiled = indexed.scope_hits(rows).order_by(order).limit(1000).compile(db.engine)
                plan = generic_plan(compiled, {**compiled.params, **indexed.values,
                                               **scope_values(indexed), "w": "parcel"})
                assert index in plan
        finally:
            db.session.remove()
            db.engine.dispose()


def generic_plan(compiled, values: dict) -> str:
    """EXPLAIN of the statement prepared, as psycopg prepares one it runs often, and executed with
    `values`: under plan_cache_mode force_generic_plan, its plan made without them."""
    names = re.findall(r"%\((\w+)\)s", str(compiled))
    numbered = iter(range(1, len(names) + 1))
    types = ", ".join("bigint" if isinstance(values[n], int) else "text" for n in names)
    arguments = ", ".join(str(values[n]) if isinstance(values[n], int) else
                          "'" + str(values[n]).replace("'", "''") + "'" for n in names)
    connection = db.session.connection()
    connection.exec_driver_sql(f"PREPARE probe({types}) AS " + re.sub(
        r"%\((\w+)\)s", lambda _: f"${next(numbered)}", str(compiled)))
    try:
        return "\n".join(row[0] for row in connection.exec_driver_sql(
            f"EXPLAIN EXECUTE probe({arguments})"))
    finally:
        connection.exec_driver_sql("DEALLOCATE probe")


def many_rows_one_with_a_parcel(user) -> None:
    """2,000 turns and 2,000 memories of one customer, a single one of each about a parcel: few
    enough rows hold the word that its index is the cheap way to them."""
    from sqlalchemy import insert
    from webapp.memories.models import Memory
    from webapp.models import Turn
    conversation = create_conversation(user)
    db.session.execute(insert(Turn), [
        {"conversation_id": conversation.id, "seq": i, "messages": [], "compact": [],
         "outcome": "answered", "question": "Where is my parcel?" if i == 7 else f"question {i}",
         "answer": f"answer {i}"} for i in range(2000)])
    db.session.execute(insert(Memory), [
        {"tenant_id": user.tenant_id, "subject_id": user.id, "source": "hand",
         "content": "Parcels go to the back door." if i == 7 else f"note {i}"} for i in range(2000)])
    db.session.commit()


def test_full_text_indexes_take_rows_directly_on_postgresql(postgres_url):
    """New rows go straight into the GIN indexes (migration 0041): queued in a pending list, they
    made every search read the whole list first, 1.5 to 6 ms a word at a million turns."""
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url})
    with app.app_context():
        try:
            create_schema()
            options = dict(db.session.execute(text(
                "SELECT relname, array_to_string(reloptions, ',') FROM pg_class "
                "WHERE relname IN ('ix_turns_fulltext', 'ix_memories_fulltext')")).all())
            assert options == {"ix_turns_fulltext": "fastupdate=off",
                               "ix_memories_fulltext": "fastupdate=off"}
        finally:
            db.session.remove()
            db.engine.dispose()
