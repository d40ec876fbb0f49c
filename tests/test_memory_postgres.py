"""Long-term memory on PostgreSQL: full-text keyword search, hybrid recall, isolation, retention."""
import pytest
from sqlalchemy import text

from webapp import create_app
from webapp.accounts import find_user, get_or_create_tenant, get_or_create_user, seed_demo
from webapp.database import create_schema
from webapp.extensions import db
from webapp.memories.history import search_turns
from webapp.memories.recall import search
from webapp.memories.scopes import SessionScope
from webapp.memories.store import remember
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
