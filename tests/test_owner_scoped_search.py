"""A word is looked up for one scope (the owner in the full-text index), and a search finds
exactly what it found when the index handed over the whole shop's hits, filtered by owner
afterwards: the same rows with the same scores, to the bit, for every customer, over the recall
corpus's questions and the shop's most common words, on SQLite and PostgreSQL."""
import random
from dataclasses import replace

import pytest
from sqlalchemy import insert, select

from bench.recall_corpus import build_user
from webapp import create_app
from webapp.accounts import find_user, get_or_create_tenant, seed_demo
from webapp.database import create_schema
from webapp.extensions import db
from webapp.memories.search import keywords
from webapp.memories.search.keyword_index import session_tokens
from webapp.memories.models import Memory
from webapp.memories.store.scopes import SessionScope, branches_bound
from webapp.models import Conversation, Turn, User
from webapp.storage import create_conversation

COMMON = ["order", "customer", "prefers", "asked", "thanks", "parcel", "really", "today"]


def fill_shop(customers: list) -> list[str]:
    """Every customer's turns (recall-corpus sessions) and memories of every scope, interleaved
    so each customer's rows lie among the others'; returns the questions to ask."""
    rng, corpora = random.Random(36), [build_user(i) for i in range(3)]
    conversations = {c.id: create_conversation(c).id for c in customers}
    turns, memories = [], []
    for s in range(12):
        for i, customer in enumerate(customers):
            for t, row in enumerate(corpora[i % 3].sessions[s][:4]):
                turns.append({"conversation_id": conversations[customer.id], "seq": 4 * s + t,
                              "messages": [], "compact": [], "outcome": "answered", **row})
            scope = SessionScope.for_user(customer)
            about = [("account", customer.id)] + [("order", o) for o in scope.orders.values()]
            kind, id_ = rng.choice(about) if rng.random() < 0.8 else (None, None)
            memories.append({"tenant_id": customer.tenant_id, "memorable_type": kind,
                             "memorable_id": id_, "source": "distilled",
                             "subject_id": customer.id if rng.random() < 0.7 else None,
                             "content": f"The customer {rng.choice(COMMON)} about order "
                                        f"{rng.randrange(40000, 40100)} {rng.choice(COMMON)}."})
    db.session.execute(insert(Turn), turns)
    db.session.execute(insert(Memory), memories)
    db.session.commit()
    return [q.text for corpus in corpora for q in corpus.questions][::3] + COMMON


def unscoped(indexed):
    """The search as it was: no scope tokens, so the index hands over every customer's hits, and
    the person checked on their conversations."""
    return replace(indexed, tokens=None, matched=None, form=None)


def same_results(customers, questions) -> None:
    for customer in customers:
        turns = keywords.turns_indexed(customer)
        scope = SessionScope.for_user(customer)
        form, condition, values = scope.bound()
        mems = keywords.memories_indexed(condition, None, values, form,
                                         branches_bound(*scope.shape))
        assert turns.tokens and mems.tokens
        for question in questions:
            for indexed, text_of in ((turns, keywords.asked_and_answered),
                                     (mems, lambda row: row[1])):
                scoped = keywords.scored(indexed, question, 40, text_of)
                walked = keywords.scored(unscoped(indexed), question, 40, text_of)
                assert scoped[0] == walked[0], (customer.email, question)
                assert set(scoped[1]) == set(walked[1])


def shop_customers() -> list:
    seed_demo("demo")
    alex = find_user("alex@example.com")
    others = [User(tenant_id=alex.tenant_id, email=f"c{i}@shop.test", name=f"C{i}")
              for i in range(5)]
    db.session.add_all(others)
    db.session.commit()
    return [alex, find_user("sam@example.com"), *others]


def test_the_owner_scoped_index_ranks_as_the_whole_shops_did(app):
    customers = [find_user("alex@example.com"), find_user("sam@example.com")]
    others = [User(tenant_id=customers[0].tenant_id, email=f"c{i}@shop.test", name=f"C{i}")
              for i in range(5)]
    db.session.add_all(others)
    db.session.commit()
    customers += others
    same_results(customers, fill_shop(customers))


def test_a_turn_is_indexed_with_its_conversations_person(app, alex, sam):
    conversation = create_conversation(alex)
    db.session.add(Turn(conversation_id=conversation.id, seq=0, messages=[], compact=[],
                        question="Where is my parcel?", answer="On its way.", outcome="answered"))
    db.session.commit()
    assert db.session.scalar(select(Turn.owner_id).where(
        Turn.conversation_id == conversation.id)) == alex.id
    found = db.session.execute(db.text("SELECT rowid FROM turns_fts WHERE turns_fts MATCH "
                                       ":q"), {"q": f'owner_id : "{alex.id}" AND parcel'}).all()
    assert len(found) == 1
    assert keywords.turn_scores(alex, "parcel", 10) and not keywords.turn_scores(sam, "parcel", 10)


def test_a_memory_moved_to_another_scope_is_found_there_only(app, alex, sam):
    memory = Memory(tenant_id=alex.tenant_id, memorable_type="account", memorable_id=alex.id,
                    subject_id=alex.id, source="hand", content="Prefers parcels at the back door.")
    db.session.add(memory)
    db.session.commit()
    memory.memorable_id = memory.subject_id = sam.id
    db.session.commit()
    for person, found in ((alex, 0), (sam, 1)):
        scope = SessionScope.for_user(person)
        form, condition, values = scope.bound()
        scores, _ = keywords.memory_matches(condition, "parcels", 10, None, values, form,
                                            branches_bound(*scope.shape))
        assert len(scores) == found


def test_a_token_is_the_scope_the_database_writes(app, alex):
    memory = Memory(tenant_id=alex.tenant_id, memorable_type="order", memorable_id=7,
                    subject_id=None, source="hand", content="Gift wrapped.")
    db.session.add(memory)
    db.session.commit()
    token = session_tokens(alex.tenant_id, alex.id, [7])
    assert db.session.execute(db.text(
        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH :q"),
        {"q": f'scope : "{token[-2]}"'}).scalar() == 1


@pytest.mark.slow
def test_the_owner_scoped_index_ranks_as_the_whole_shops_did_on_postgresql(postgres_url):
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url})
    with app.app_context():
        try:
            create_schema()
            customers = shop_customers()
            same_results(customers, fill_shop(customers))
        finally:
            db.session.remove()
            db.engine.dispose()


def test_word_counts_go_on_past_the_cap(app, alex, monkeypatch):
    """A word counted to the cap is estimated from the scope's newest rows, so one held by every
    row is left out as over half the scope, and the others keep counts near their real ones."""
    from webapp.memories.search import statements
    monkeypatch.setattr(statements, "STATEMENTS", {})  # the limits are written into them
    monkeypatch.setattr(keywords, "COUNT_CAP", 10)
    monkeypatch.setattr(keywords, "ESTIMATE_WINDOW", 200)
    monkeypatch.setattr(keywords, "COMMON_WORD_MIN_ROWS", 10)
    conversation = create_conversation(alex)
    db.session.execute(insert(Turn), [
        {"conversation_id": conversation.id, "seq": i, "messages": [], "compact": [],
         "outcome": "answered", "answer": "Noted.",
         "question": "parcel" + " kettle" * (i % 4 == 0) + " lamp" * (i % 8 == 0)}
        for i in range(120)])
    db.session.commit()
    stats = keywords.statistics(keywords.turns_indexed(alex), ["parcel", "kettle", "lamp"], [])
    assert stats.rows == 120 and stats.holding.keys() == {"kettle", "lamp"}
    assert 28 <= stats.holding["kettle"] <= 32 and 14 <= stats.holding["lamp"] <= 17
