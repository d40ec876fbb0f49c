"""What a search reads stays bounded by the pool, and the shortcuts find exactly the same rows."""
from datetime import datetime

import pytest
from hypothesis import given, settings, strategies as st
from sqlalchemy import insert, select

from webapp.extensions import db
from webapp.memories.search import conversations as history
from webapp.memories.search.conversations import newest_turns
from webapp.models import Conversation, Turn
from webapp.storage import create_conversation

from .support import sqlite_steps


def add_turns(conversations, count: int) -> None:
    """`count` turns spread over the conversations in turn (ids interleave between people); every
    seventh one still pending."""
    first = (db.session.scalar(select(db.func.max(Turn.id))) or 0) + 1
    seqs = {c.id: 0 for c in conversations}
    rows = []
    for i in range(count):
        conversation = conversations[i % len(conversations)]
        rows.append({"id": first + i, "conversation_id": conversation.id,
                     "seq": seqs[conversation.id], "messages": [], "compact": [],
                     "outcome": "pending" if i % 7 == 3 else "answered",
                     "question": f"question {i}", "answer": "answer",
                     "created_at": datetime(2026, 1, 1)})
        seqs[conversation.id] += 1
    db.session.execute(insert(Turn), rows)
    db.session.commit()


def newest_turn_ids(user, limit: int) -> list[int]:
    return [row[0] for row in newest_turns(user, limit)]


def every_newest(user, limit: int) -> list[int]:
    """The plain statement: all of the person's finished turns, sorted."""
    return list(db.session.scalars(
        select(Turn.id).join(Conversation, Conversation.id == Turn.conversation_id)
        .where(Conversation.user_id == user.id, Conversation.tenant_id == user.tenant_id,
               Turn.outcome != "pending").order_by(Turn.id.desc()).limit(limit)))


@pytest.mark.parametrize("limit", [1, 2, 5, 9, 40, 300])
def test_the_newest_turns_are_those_of_sorting_them_all(app, alex, sam, limit):
    add_turns([create_conversation(alex), create_conversation(sam), create_conversation(alex),
               create_conversation(sam), create_conversation(sam)], 120)
    for user in (alex, sam):
        assert newest_turn_ids(user, limit) == every_newest(user, limit)


def test_a_window_short_of_the_limit_reads_further_back(app, alex, sam, monkeypatch):
    mine = create_conversation(alex)
    add_turns([mine], 6)
    add_turns([create_conversation(sam)], 200)  # everyone else's turns came after
    monkeypatch.setattr(history, "NEWEST_WINDOWS", (1, 2))
    assert newest_turn_ids(alex, 4) == every_newest(alex, 4) != []
    assert newest_turn_ids(alex, 50) == every_newest(alex, 50)


def test_a_conversation_in_its_undo_window_offers_no_turns_by_similarity(app, alex):
    kept, deleted = create_conversation(alex), create_conversation(alex)
    add_turns([kept, deleted], 10)
    deleted.deleted_at = datetime(2026, 1, 2)
    db.session.commit()
    turns = db.session.scalars(select(Turn.id).where(Turn.conversation_id == kept.id,
                                                     Turn.outcome != "pending")).all()
    assert sorted(newest_turn_ids(alex, 10), reverse=True) == sorted(turns, reverse=True)


def test_nobody_has_turns_yet(app, alex):
    assert newest_turn_ids(alex, 10) == []


def test_keyword_candidates_bring_their_vectors_and_the_newest_turns_theirs(app, alex):
    check_vectors_come_along(app, alex)


def check_vectors_come_along(app, alex):
    """One turn found by keywords (its vector read with it), one only by meaning among the newest
    (its vector joined to them), one by keywords without a vector at all."""
    from webapp.memories.search.conversations import search_turns
    from webapp.memories.search.keywords import turn_matches
    from webapp.memories.models import TurnVector
    from .support import ask
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    ask(alex, "My parcel should go to the back door.")
    ask(alex, "Please leave deliveries with the neighbour at number 12.")
    _, bare, _ = ask(alex, "Is the parcel insured?")
    db.session.execute(db.delete(TurnVector).where(TurnVector.turn_id == bare.turns[0].id))
    db.session.commit()
    scores, rows = turn_matches(alex, "parcel", 50)
    assert {row[0] for row in rows} == set(scores) and len(rows) == 2
    assert [row[1] is None for row in sorted(rows)] == [False, True]
    results, mode = search_turns(alex, "where should the parcel be left", app.config, limit=3)
    by_question = {r["question"]: r["why"] for r in results}
    assert mode == "hybrid" and len(by_question) == 3
    assert by_question["Is the parcel insured?"].startswith("no vector")
    assert "keyword" not in by_question["Please leave deliveries with the neighbour at number 12."]
    assert "keyword rank" in by_question["My parcel should go to the back door."]


@pytest.mark.slow  # needs PostgreSQL
def test_the_same_newest_turns_and_vectors_on_postgresql(postgres_url, monkeypatch):
    from sqlalchemy import text
    from webapp import create_app
    from webapp.accounts import find_user, seed_demo
    from webapp.database import create_schema
    app = create_app({"TESTING": True, "DATABASE_URL": postgres_url,
                      "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0})
    with app.app_context():
        try:
            create_schema()
            seed_demo("demo")
            alex, sam = find_user("alex@example.com"), find_user("sam@example.com")
            assert db.session.scalar(text(
                "SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_turns_newest'")) == 1
            check_vectors_come_along(app, alex)
            add_turns([create_conversation(alex), create_conversation(sam),
                       create_conversation(alex)], 90)
            for limit in (1, 5, 9, 40, 300):
                assert newest_turn_ids(alex, limit) == every_newest(alex, limit)
            monkeypatch.setattr(history, "NEWEST_WINDOWS", (1, 2))
            assert newest_turn_ids(sam, 20) == every_newest(sam, 20)
        finally:
            db.session.remove()
            db.engine.dispose()


def test_sqlite_reads_through_a_memory_map(app):
    from webapp.database import SQLITE_MMAP_BYTES
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA mmap_size").scalar() == SQLITE_MMAP_BYTES


def test_words_are_the_same_in_ascii_and_in_any_other_text():
    from webapp.memories.search.bm25 import WORD, words_of
    for text in ["The customer's e-mail, 2nd try_2!", "Café déjà-vu in der Straße",
                 "İstanbul ΣΊΣΥΦΟΣ", "", None, "١٢٣ and 漢字 too"]:
        assert words_of(text) == WORD.findall((text or "").lower())


def test_ascii_text_is_split_into_the_same_words_as_bytes():
    from webapp.memories.search.bm25 import WORD, tokens_of
    for text in ["The Customer's e-mail,\t2nd try_2!\n", "Café déjà-vu", "", None, "a\x00b~c"]:
        assert [w.decode() if isinstance(w, bytes) else w for w in tokens_of(text)] == \
            WORD.findall((text or "").lower())
    assert tokens_of("Parcel DOOR") == [b"parcel", b"door"] and tokens_of("Café") == ["café"]


def test_a_terms_frequency_counts_every_spelling_that_stems_to_it():
    from webapp.memories.search.bm25 import Candidate, ScopeStatistics, bm25_scores
    stats = ScopeStatistics(100, {"returns": 10})
    once, thrice = Candidate(1, "a return of a parcel"), Candidate(2, "returned, returns, return")
    scores = bm25_scores(["returns"], stats, [once, thrice, Candidate(3, "nothing here")])
    assert set(scores) == {1, 2} and scores[2] > scores[1]
    # the same word in ASCII and in other text: bytes in one, str in the other, counted in both
    mixed = bm25_scores(["returns"], stats, [Candidate(1, "Return it"), Candidate(2, "Return à")])
    assert mixed[1] == mixed[2] > 0


WORDS = ["return", "returns", "returned", "returning", "lamp", "lamps", "Lamp", "deliveries",
         "delivery", "delivered", "die", "dying", "sky", "skies", "ability", "able", "generously",
         "generous", "organization", "organize", "happy", "happiness", "31", "3rd", "x_y", "a", "I",
         "do", "cook", "cooking", "cookies", "co", "hoping", "hopping", "hope", "relational"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS + [",", "!", " ", "\n", "-", "'s"]), max_size=30)
                .map(" ".join), min_size=1, max_size=12),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
def test_ascii_texts_are_counted_in_one_buffer_as_word_by_word(texts, query):
    """The fast path (one buffer, only words that can stem to a term read) gives the same token
    counts and term frequencies as splitting each text and stemming every word."""
    from webapp.memories.search.bm25 import ascii_counts, stem, token_counts
    terms = list(dict.fromkeys(stem(w.lower()) for w in query))
    fast_lengths, fast = ascii_counts(texts, terms)
    slow_lengths, slow = token_counts(texts, terms)
    assert fast_lengths.tolist() == slow_lengths.tolist()
    assert {t: c.tolist() for t, c in fast.items()} == {t: c.tolist() for t, c in slow.items()}


def test_scores_of_ascii_and_other_texts_are_the_same_bm25():
    """Candidates in ASCII take the fast path, any other text the word-by-word one: the same
    words score the same, to the bit."""
    from webapp.memories.search.bm25 import Candidate, ScopeStatistics, bm25_scores
    stats = ScopeStatistics(100, {"lamp": 5, "returns": 20}, on_date=3)
    texts = ["A lamp, returned.", "Lamps lamp LAMP", "nothing here", "returns: the lamp"]
    ascii_ = bm25_scores(["lamp", "returns"], stats, [Candidate(i, t, i == 2)
                                                      for i, t in enumerate(texts)])
    assert set(ascii_) == {0, 1, 2, 3} and ascii_[2] > 0  # on the date alone
    same = bm25_scores(["lamp", "returns"], stats, [Candidate(i, t.replace("nothing", "nöthing"),
                                                              i == 2) for i, t in enumerate(texts)])
    assert same == ascii_


def test_relevance_is_compared_to_nine_places_and_the_newer_wins_a_tie():
    from webapp.memories.search.bm25 import best_first
    assert best_first({1: 0.5, 2: 0.5, 3: 0.5000000001, 4: 0.7, 5: -1.0}) == [4, 3, 2, 1, 5]
    assert best_first({}) == [] and best_first({7: 1.0}) == [7]
    # 0.1 + 0.2 is 0.30000000000000004: equal to 0.3 at nine places, so the newer comes first
    assert best_first({1: 0.1 + 0.2, 2: 0.3, 3: 0.3 + 3e-9, 4: 0.29, 5: 0.0}) == [3, 2, 1, 4, 5]
    assert best_first({1: float("inf"), 2: 0.3, 3: 0.1 + 0.2}) == [1, 3, 2]


def test_vectors_of_one_length_stack_as_one_matrix_and_unequal_ones_fail_as_before():
    import numpy as np
    from webapp.memories.search.recall import stacked
    rows = [np.arange(4, dtype=np.float32) + i for i in range(3)]
    assert np.array_equal(stacked([r.tobytes() for r in rows]), np.vstack(rows))
    with pytest.raises(ValueError):
        stacked([rows[0].tobytes(), rows[1][:3].tobytes()])


def test_candidate_rows_are_read_by_name_and_each_is_kept_once(app, alex):
    from webapp.memories.search.keywords import candidates, memories_indexed
    from webapp.memories.store.scopes import SessionScope
    from webapp.memories.store.rows import remember
    app.config["NIMBUS_MEMORY_SEARCH"] = False
    scope = SessionScope.for_user(alex)
    first = remember(scope, "The parcel goes to the back door.", app.config, source="hand")[0]
    remember(scope, "The parcel is insured.", app.config, source="hand")
    rows = candidates(memories_indexed(scope.applies()), ["door", "parcel"], [], 10)
    assert [row.id for row in rows] == [first.id, first.id + 1]  # the rarer word's first
    assert rows[0].content == "The parcel goes to the back door." and rows[0][0] == first.id
    assert rows[0].embedding is None and not hasattr(rows[0], "on_date")  # read when dated
    whenever = [(datetime(2000, 1, 1), datetime(2100, 1, 1))]
    dated = candidates(memories_indexed(scope.applies()), ["door"], whenever, 10)
    assert [row.id for row in dated] == [first.id, first.id + 1]  # the door, then the dates
    assert all(row.on_date for row in dated)
    never = [(datetime(2000, 1, 1), datetime(2000, 1, 2))]
    assert not any(row.on_date for row in candidates(
        memories_indexed(scope.applies()), ["door"], never, 10))


def test_one_statement_counts_the_scope_its_words_and_what_was_added_since(app, alex):
    """Between 1,000 and 2,000 rows a word's count stops at half the scope (then it is left out),
    as if its count had stopped there; rows added later top the scope's count up."""
    from webapp.memories.search.keywords import memories_indexed, statistics
    from webapp.memories.models import Memory
    from webapp.memories.store.scopes import SessionScope

    def add(count, text_of):
        db.session.execute(insert(Memory), [
            {"tenant_id": alex.tenant_id, "subject_id": alex.id, "source": "hand",
             "content": text_of(i)} for i in range(count)])
        db.session.commit()
    add(1200, lambda i: f"note {i}" + (" parcel" if i < 700 else "") + (" door" if i < 500 else ""))
    scope = SessionScope.for_user(alex)
    indexed = memories_indexed(scope.applies(), key=("test", alex.id))
    stats = statistics(indexed, ["parcel", "door"], [])
    assert stats.rows == 1200 and stats.holding == {"door": 500}  # parcel: 700 > half, left out
    add(900, lambda i: f"later note {i}")
    stats = statistics(indexed, ["parcel", "door"], [])
    assert stats.rows == 2100 and stats.holding == {"parcel": 700, "door": 500}


def test_statements_built_once_answer_each_person_with_their_own_rows(app, alex, sam):
    """The search statements are reused across people with new bound values: one after another,
    each person finds only their own turns and memories, never the previous searcher's."""
    from webapp.memories.search.conversations import search_turns
    from webapp.memories.search.recall import search
    from webapp.memories.store.scopes import SessionScope
    from webapp.memories.store.rows import remember
    from .support import ask
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    for user in (alex, sam):
        ask(user, f"My umbrella is at {user.name}'s office.")
        remember(SessionScope.for_user(user), f"{user.name} keeps an umbrella at work.",
                 app.config, source="hand")
    for user in (alex, sam, alex):
        turns, _ = search_turns(user, "umbrella", app.config, limit=10)
        assert [t["question"] for t in turns] == [f"My umbrella is at {user.name}'s office."]
        memories, _ = search(SessionScope.for_user(user), "umbrella", app.config, limit=10)
        assert [m.content for m, _ in memories] == [f"{user.name} keeps an umbrella at work."]



def test_a_search_does_not_walk_the_conversations_of_the_shops_other_customers(app, alex, sam):
    """One shop, many customers: a person's turns (their newest, those on a date, their count)
    are found through their own conversations, whatever the number of everyone else's."""
    from webapp.memories.search.conversations import search_turns
    add_turns([create_conversation(alex), create_conversation(alex)], 40)

    def search():
        search_turns(alex, "my question on 1 January 2026", app.config, limit=5)
    search()
    alone = sqlite_steps(search)
    assert alex.tenant_id == sam.tenant_id
    db.session.execute(insert(Conversation), [
        {"id": f"other{i:027d}", "tenant_id": sam.tenant_id, "user_id": sam.id, "title": "Other"}
        for i in range(3000)])
    db.session.commit()
    search()
    assert sqlite_steps(search) < alone * 1.5


def test_a_question_naming_a_day_reads_that_days_turns_not_all_of_them(app, alex):
    from webapp.memories.search.conversations import search_turns
    mine = create_conversation(alex)
    add_turns([mine], 20)

    def search():
        return search_turns(alex, "What was on 1 January 2026?", app.config, limit=5)[0]
    search()
    few = sqlite_steps(search)
    earlier = create_conversation(alex)
    add_turns([earlier], 2000)
    db.session.execute(db.update(Turn).where(Turn.conversation_id == earlier.id)
                       .values(created_at=datetime(2025, 6, 1)))
    db.session.commit()
    assert len(search()) == 5
    assert sqlite_steps(search) < few * 3
