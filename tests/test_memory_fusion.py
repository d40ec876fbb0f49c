"""Hybrid ranking's edge cases: one signal missing, down or silent, and ties."""
import numpy as np
import pytest

from webapp.memories.search.embeddings import EmbedderUnavailable, to_bytes
from webapp.memories.search.recall import (RANK, RRF_K, SCORE, fused, rank_hybrid, score_fused,
                                           similarity_alone_may_place)

CONFIG = {"NIMBUS_MEMORY_MIN_SIMILARITY": 0.2, "NIMBUS_MEMORY_KEYWORD_WEIGHT": 0.5}


class Embedder:
    name = "test-model"


class Query:
    """A query embedding that is either a unit vector or an embedder that is down."""

    def __init__(self, vector=None):
        self.embedder, self._vector = Embedder(), vector

    def vector(self):
        if self._vector is None:
            raise EmbedderUnavailable("model file missing")
        return self._vector


def unit(similarity: float) -> np.ndarray:
    """A vector whose cosine with the query [1, 0] is `similarity`."""
    return np.array([similarity, np.sqrt(1 - similarity ** 2)], np.float32)


def vectors(similarities: dict[int, float]):
    rows = [(i, to_bytes(unit(s)), Embedder.name) for i, s in similarities.items()]
    return lambda ids: [row for row in rows if row[0] in ids]


def ranked(keyword: dict[int, float], similarities: dict[int, float], query=None,
           fusion="rank", **config):
    found, mode = rank_hybrid(query or Query(unit(1.0)), [], list(similarities),
                              vectors(similarities), {**CONFIG, **config}, 10,
                              keyword_scores=keyword, fusion=fusion)
    return [r.id for r in found], mode, found


def test_without_a_keyword_hit_similarity_alone_ranks_and_unlike_rows_stay_out():
    ids, mode, found = ranked({}, {1: 0.9, 2: 0.5, 3: 0.1})
    assert mode == "hybrid" and ids == [1, 2]
    assert found[0].why == "similarity 0.90"


def test_a_row_without_a_vector_still_ranks_by_its_keywords():
    ids, _, found = ranked({7: 4.0, 8: 1.0}, {8: 0.6, 9: 0.3})
    assert set(ids) == {7, 8, 9}
    assert next(r.why for r in found if r.id == 7) == "no vector · keyword rank 1"


def test_an_embedder_that_is_down_leaves_the_keyword_order():
    ids, mode, found = ranked({1: 1.0, 2: 3.0}, {1: 0.9, 3: 0.9}, query=Query(None))
    assert mode == "keywords" and ids == [2, 1]
    assert found[0].why == "keyword rank 1"


def test_a_row_both_signals_agree_on_beats_a_row_only_one_of_them_likes():
    # 1: second by keywords and by similarity; 2: first by keywords only; 3: first by likeness only
    ids, _, _ = ranked({1: 2.0, 2: 3.0}, {1: 0.7, 3: 0.9, 4: 0.3})
    assert ids[0] == 1


@pytest.mark.parametrize("weight, first", [(0.9, 2), (0.1, 3)])
def test_the_weight_decides_between_the_signals(weight, first):
    ids, _, _ = ranked({2: 3.0}, {3: 0.9}, NIMBUS_MEMORY_KEYWORD_WEIGHT=weight)
    assert ids[0] == first


def test_ties_go_to_the_newer_row():
    ids, _, _ = ranked({4: 1.0, 9: 1.0, 6: 1.0}, {4: 0.5, 9: 0.5, 6: 0.5})
    assert ids == [9, 6, 4]


def test_fusion_adds_the_reciprocal_ranks_a_missing_signal_adds_nothing():
    scores = fused({1: 1, 2: 2}, {2: 1, 3: 1}, weight=0.25)
    assert scores[1] == pytest.approx(0.25 / (RRF_K + 1))
    assert scores[2] == pytest.approx(0.25 / (RRF_K + 2) + 0.75 / (RRF_K + 1))
    assert scores[3] == pytest.approx(0.75 / (RRF_K + 1))
    assert fused({}, {}, 0.5) == {}


@pytest.mark.parametrize("weight", [0.3, 0.5, 0.8, 0.95])
@pytest.mark.parametrize("limit", [1, 5, 10, 50])
def test_the_newest_rows_are_skipped_only_when_no_row_without_a_keyword_hit_could_place(
        weight, limit):
    """The newest rows are read to offer rows found by similarity alone; once `limit` keyword
    hits are found they are skipped only if the best such row (similarity rank 1) would still
    rank below keyword rank `limit` (with any similarity rank of its own: none at worst)."""
    config = {**CONFIG, "NIMBUS_MEMORY_KEYWORD_WEIGHT": weight}
    keyword = {i: i for i in range(1, limit + 1)}  # ranks 1..limit
    scores = fused(keyword, {0: 1}, weight)
    cannot_place = scores[0] < scores[limit]
    assert similarity_alone_may_place(limit, limit, config) is not cannot_place
    assert similarity_alone_may_place(limit - 1, limit, config)  # fewer hits: always read


def test_score_fusion_scales_each_signal_by_the_querys_best():
    scores = score_fused({1: 4.0, 2: 2.0}, {2: 0.6, 3: 0.4, 4: 0.1}, weight=0.8, floor=0.2)
    assert scores[1] == pytest.approx(0.8)  # the best keyword hit, no likeness above the floor
    assert scores[2] == pytest.approx(0.8 * 0.5 + 0.2 * 1.0)  # half the best BM25, the best cosine
    assert scores[3] == pytest.approx(0.2 * 0.5)  # (0.4 - 0.2) / (0.6 - 0.2)
    assert 4 not in scores  # under the floor and no keyword hit: not returned
    assert score_fused({}, {}, 0.8, 0.2) == {}
    assert score_fused({1: 1.0}, {1: 0.1}, 0.8, 0.2) == {1: pytest.approx(0.8)}


def test_score_fusion_keeps_a_keyword_hit_far_ahead_first_where_ranks_would_not():
    """Rank fusion forgets by how much the best keyword hit leads: a turn sharing the question's
    rare words (BM25 9) lost to one with a stray common word (BM25 1) that was the most alike."""
    keyword, likeness = {1: 9.0, 2: 1.0}, {1: 0.3, 2: 0.7, 3: 0.6}
    by_rank, _, _ = ranked(keyword, likeness, NIMBUS_MEMORY_KEYWORD_WEIGHT=0.5)
    assert by_rank[0] == 2
    by_score, _, _ = ranked(keyword, likeness, NIMBUS_MEMORY_KEYWORD_WEIGHT=0.5, fusion=SCORE)
    assert by_score[:2] == [1, 2]


def test_score_fusion_lets_likeness_decide_between_near_equal_keyword_hits():
    ids, _, found = ranked({1: 3.0, 2: 2.9}, {1: 0.25, 2: 0.8}, fusion=SCORE)
    assert ids == [2, 1] and found[0].why == "similarity 0.80 · keyword rank 2"


@pytest.mark.parametrize("weight", [0.5, 0.8, 0.9])
@pytest.mark.parametrize("tail", [0.05, 0.2, 0.5, 1.0])
def test_with_score_fusion_the_newest_rows_are_skipped_only_when_they_cannot_place(weight, tail):
    """A row without a keyword hit scores at most 1 - w (the most alike of all); the keyword hit
    at rank `limit` scores at least w x its BM25 / the best."""
    limit, config = 5, {**CONFIG, "NIMBUS_MEMORY_KEYWORD_WEIGHT": weight}
    keyword = {1: 1.0, **{i: tail for i in range(2, limit + 1)}}
    scores = score_fused(keyword, {0: 1.0}, weight, 0.2)
    cannot_place = scores[0] < min(scores[i] for i in keyword)
    assert similarity_alone_may_place(limit, limit, config, keyword, SCORE) is not cannot_place
    assert similarity_alone_may_place(limit - 1, limit, config, keyword, SCORE)


def beside_of(pairs: dict[int, list[int]], similarities: dict[int, float]):
    """A `beside` reading {hit: [its neighbours]}, with vectors of the given likeness."""
    def beside(ids):
        return [(n, hit, to_bytes(unit(similarities[n])) if n in similarities else None,
                 Embedder.name if n in similarities else None)
                for hit in ids for n in pairs.get(hit, [])]
    return beside


def test_a_turn_next_to_a_strong_hit_shares_its_score_and_says_so():
    # 5 answers 4 ("it was amazing"): no keyword, barely alike, but next to the best hit
    pairs = {4: [3, 5], 9: [8]}
    found, _ = rank_hybrid(Query(unit(1.0)), [], [], vectors({4: 0.9, 9: 0.5}),
                           {**CONFIG, "NIMBUS_MEMORY_KEYWORD_WEIGHT": 0.8}, 10,
                           keyword_scores={4: 5.0, 9: 1.0, 7: 0.5}, fusion=SCORE,
                           beside=beside_of(pairs, {3: 0.1, 5: 0.3, 8: 0.25}))
    ids = [r.id for r in found]
    assert ids[:2] == [4, 5] and set(ids) == {3, 4, 5, 7, 8, 9}
    why = {r.id: r.why for r in found}
    assert why[5] == "similarity 0.30 · next to a match"
    assert why[3] == "similarity 0.10 · next to a match"
    assert why[4] == "similarity 0.90 · keyword rank 1"  # 3 and 5 are not among the hits


def test_rank_fusion_and_a_search_without_neighbours_add_no_context():
    pairs = {4: [5]}
    for fusion, beside in ((RANK, beside_of(pairs, {5: 0.3})), (SCORE, None)):
        found, _ = rank_hybrid(Query(unit(1.0)), [], [], vectors({4: 0.9}), CONFIG, 10,
                               keyword_scores={4: 5.0}, fusion=fusion, beside=beside)
        assert [r.id for r in found] == [4]


def test_conversation_search_finds_the_reply_next_to_the_turn_that_matched(app, alex):
    from webapp.memories.search.conversations import search_turns
    from webapp.memories.search.recall import CONTEXT_SHARE
    from .support import ask
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    _, conversation, _ = ask(alex, "We saw the Perseid meteor shower while camping last year.")
    ask(alex, "Honestly I felt tiny, lying there in awe of it all.", conversation)
    ask(alex, "Unrelated: my kettle broke this morning.")
    results, mode = search_turns(alex, "perseid meteor shower", app.config, limit=5)
    assert mode == "hybrid" and CONTEXT_SHARE > 0
    assert [r["turn"] for r in results[:2]] == [0, 1]
    assert results[1]["conversation_id"] == conversation.id
    assert "next to a match" in results[1]["why"]
