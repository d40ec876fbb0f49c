"""Hybrid ranking's edge cases: one signal missing, down or silent, and ties."""
import numpy as np
import pytest

from webapp.memories.search.embeddings import EmbedderUnavailable, to_bytes
from webapp.memories.search.recall import RRF_K, fused, rank_hybrid, similarity_alone_may_place

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


def ranked(keyword: dict[int, float], similarities: dict[int, float], query=None, **config):
    found, mode = rank_hybrid(query or Query(unit(1.0)), [], list(similarities),
                              vectors(similarities), {**CONFIG, **config}, 10,
                              keyword_scores=keyword)
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
