"""Keyword relevance: BM25 with the scope's own statistics, recency only breaks ties, dates count."""
from datetime import datetime

import numpy as np
import pytest

from webapp.extensions import db
from webapp.memories.search.dates import find_dates
from webapp.memories.search.embeddings import MiniLMEmbedder
from webapp.memories.search.conversations import search_turns
from webapp.memories.search.keywords import statistics, turns_indexed
from webapp.memories.search.bm25 import Candidate, ScopeStatistics, bm25_scores, best_first

from .support import ask

TODAY = datetime(2026, 12, 1)


@pytest.fixture
def keywords_only(app):
    app.config["NIMBUS_MEMORY_SEARCH"] = False
    return app.config


def questions(results):
    return [r["question"] for r in results]


def test_an_old_strong_match_beats_newer_weak_ones(app, alex, keywords_only):
    ask(alex, "My espresso grinder is broken, the espresso grinder burrs are stuck.")
    for i in range(4):
        ask(alex, f"Do you sell a grinder stand number {i}?")
    results, mode = search_turns(alex, "espresso grinder", app.config)
    assert mode == "keywords" and results[0]["question"].startswith("My espresso grinder")


def test_recency_breaks_ties_between_equal_matches(app, alex, keywords_only):
    for colour in ("red", "blue"):
        ask(alex, f"Is the {colour} rain jacket waterproof?")
    assert questions(search_turns(alex, "waterproof", app.config)[0])[0].startswith("Is the blue")


def test_term_statistics_come_from_the_persons_own_turns(app, alex, sam):
    ask(alex, "Where is my parcel?")
    for i in range(3):
        ask(sam, f"Parcel question {i}")
    stats = statistics(turns_indexed(alex), ["parcel"], [])
    assert (stats.rows, stats.holding) == (1, {"parcel": 1})


def test_bm25_rewards_rare_words_and_repeats():
    stats = ScopeStatistics(rows=100, holding={"lamp": 2, "order": 60})
    scores = bm25_scores(["lamp", "order"], stats, [Candidate(1, "my order"),
                                                    Candidate(2, "the lamp"),
                                                    Candidate(3, "lamp lamp order")])
    assert best_first(scores) == [3, 2, 1]


@pytest.mark.parametrize("query, start", [
    ("what did I cook on March 14?", datetime(2026, 3, 14)),
    ("what did I cook on the 14th of March", datetime(2026, 3, 14)),
    ("dinner 2025-03-14", datetime(2025, 3, 14)),
    ("what about December 25", datetime(2025, 12, 25)),  # not yet this year: last year's
])
def test_a_named_day_becomes_a_range(query, start):
    ranges, rest = find_dates(query, TODAY)
    assert [r[0] for r in ranges] == [start] and (ranges[0][1] - start).days == 1
    assert "14" not in rest and "25" not in rest


def test_a_named_month_covers_the_month_and_nonsense_is_not_a_date():
    assert find_dates("what did we say in February", TODAY)[0] == [
        (datetime(2026, 2, 1), datetime(2026, 3, 1))]
    assert find_dates("on February 31 or 2026-13-01", TODAY)[0] == []


def test_a_turn_is_found_by_the_day_it_was_said(app, alex, keywords_only):
    _, conversation, _ = ask(alex, "I made gnocchi for dinner tonight.")
    ask(alex, "I made a curry for dinner tonight.")
    conversation.turns[0].created_at = datetime(2026, 3, 14, 19, 30)
    db.session.commit()
    results, _ = search_turns(alex, "What did I cook for dinner on March 14?", app.config)
    assert questions(results)[0] == "I made gnocchi for dinner tonight."


def test_batched_embeddings_match_one_at_a_time(app):
    texts = ["Alex prefers email.", "A much longer sentence about the espresso grinder " * 3, "ok"]
    batched = MiniLMEmbedder().embed(texts)
    single = np.vstack([MiniLMEmbedder().embed([t]) for t in texts])
    assert np.allclose(batched, single, atol=1e-4)


def test_a_question_about_what_nimbus_said_favours_its_answers(app, alex):
    from webapp.memories.search.keywords import turn_scores
    _, mine, _ = ask(alex, "My basil keeps wilting in the sun, any basil tips?")
    _, theirs, _ = ask(alex, "Which herbs grow on a windowsill?")
    theirs.turns[0].answer = "Basil and mint grow well on a windowsill; water basil at the roots."
    mine.turns[0].answer = "Sorry to hear that."
    db.session.commit()
    said, asked = theirs.turns[0].id, mine.turns[0].id
    by_nimbus = turn_scores(alex, "What did you suggest about basil?", 50)
    by_me = turn_scores(alex, "What did I say about basil?", 50)
    assert by_nimbus[said] / by_nimbus[asked] > by_me[said] / by_me[asked]


def test_a_named_day_is_the_readers_day(app, alex, keywords_only):
    _, conversation, _ = ask(alex, "I made gnocchi for dinner tonight.")
    conversation.turns[0].created_at = datetime(2026, 3, 15, 3, 0)  # 20:00 on the 14th in LA
    db.session.commit()
    query = "What did I say on March 14?"
    with app.test_request_context(headers={"Cookie": "nimbus_tz=America/Los_Angeles"}):
        assert questions(search_turns(alex, query, app.config)[0]) == [
            "I made gnocchi for dinner tonight."]
    with app.test_request_context(headers={"Cookie": "nimbus_tz=UTC"}):
        assert search_turns(alex, query, app.config)[0] == []  # the 15th in UTC
