"""Recall: with search on (the default), hybrid ranking; off, keywords for a search and the
newest memories in scope for the prompt block.

Hybrid = the rank by keyword relevance (BM25 with the scope's own term statistics, see ranking.py)
fused with the rank by cosine similarity (weighted reciprocal-rank fusion; NIMBUS_MEMORY_KEYWORD_
WEIGHT, the keyword share, chosen on bench/recall.py --tune), over a bounded pool (the best keyword
hits plus the newest rows, all within scope). Conversation search fuses the two scores instead,
each scaled by the query's best (NIMBUS_HISTORY_FUSION, `score_fused`): on real multi-session
transcripts rank fusion fell below keywords alone (bench/recall_real.py, docs/memory.md). A row
without a vector ranks by its keywords alone; an embedder that is down falls back to keywords
alone, logged, and the caller only notices in quality.
"""
import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sqlalchemy import bindparam, select

from ...extensions import db
from .embeddings import EmbedderUnavailable, QueryEmbedding, from_bytes
from .keywords import memory_matches
from .statements import built, newest_in, read
from ..models import Memory
from .bm25 import best_first
from ..store.scopes import SessionScope, branches_bound
from ..store.rows import newest

log = logging.getLogger(__name__)
HYBRID, KEYWORDS, RECENCY = "hybrid", "keywords", "recency"


@dataclass
class Ranked:
    id: int
    why: str
    similarity: float | None = None


RRF_K = 60  # reciprocal-rank fusion's damping constant (Cormack et al. 2009): rank 1 ~ rank 5
RANK, SCORE = "rank", "score"  # the fusions: reciprocal ranks, or scores scaled by the best


def fused(keyword_rank: dict[int, int], similarity_rank: dict[int, int], weight: float
          ) -> dict[int, float]:
    """Weighted reciprocal-rank fusion: weight / (K + keyword rank) + (1 - weight) / (K +
    similarity rank), a missing signal adding nothing. Ranks, not scores: BM25 and cosine live on
    scales that move with the query, the scope and the model, ranks do not."""
    rest, fused_ = 1 - weight, {}
    for i in keyword_rank.keys() | similarity_rank.keys():
        by_keyword, by_similarity = keyword_rank.get(i), similarity_rank.get(i)
        fused_[i] = ((weight / (RRF_K + by_keyword) if by_keyword else 0.0)
                     + (rest / (RRF_K + by_similarity) if by_similarity else 0.0))
    return fused_


def score_fused(keyword: dict[int, float], similarity: dict[int, float], weight: float,
                floor: float) -> dict[int, float]:
    """Score-aware fusion: weight x keyword score / the query's best keyword score + (1 - weight)
    x (cosine - floor) / (the best cosine - floor), a row under the floor adding nothing from
    similarity (nor returned without a keyword hit). Both terms run from 0 to 1 whatever the
    query, the scope or the model, and unlike ranks they keep how far ahead the best hit is:
    a turn that shares the question's rare words by a wide margin stays first even when its
    similarity rank is poor, and a near tie among keyword hits is decided by likeness."""
    top_keyword = max(keyword.values(), default=0.0)
    alike = {i: s - floor for i, s in similarity.items() if s >= floor}
    top_alike = max(alike.values(), default=0.0)
    rest, fused_ = 1 - weight, {}
    for i in keyword.keys() | alike.keys():
        fused_[i] = ((weight * keyword[i] / top_keyword if i in keyword and top_keyword > 0
                      else 0.0)
                     + (rest * alike[i] / top_alike if i in alike and top_alike > 0 else 0.0))
    return fused_


def similarity_alone_may_place(keyword_hits: int, limit: int, config,
                               keyword_scores: dict[int, float] | None = None,
                               fusion: str = RANK) -> bool:
    """Whether a row with no keyword hit can be among the first `limit`. Rank fusion: its best
    fused score, (1 - w) / (K + 1), must beat the keyword row at rank `limit`, w / (K + limit);
    with w 0.8 it cannot once `limit` (up to 183) keyword hits are found. Score fusion: its best,
    1 - w, must reach w x the keyword score at rank `limit` / the best (with w 0.8: a quarter of
    the best). The newest rows, read only to offer such rows, need not be read then."""
    weight = config["NIMBUS_MEMORY_KEYWORD_WEIGHT"]
    if keyword_hits < limit:
        return True
    if fusion == SCORE and keyword_scores:
        ranked = sorted(keyword_scores.values(), reverse=True)
        return weight * ranked[limit - 1] <= (1 - weight) * ranked[0]
    return weight * (RRF_K + 1) <= (1 - weight) * (RRF_K + limit)


Beside = Callable[[list[int]], list[tuple[int, int, bytes | None, str | None]]]
CONTEXT_SHARE = 0.3  # of a hit's fused score that the turns next to it get (score fusion)
CONTEXT_HITS = 2  # x limit: the best hits whose neighbours are read


def rank_hybrid(embedding: QueryEmbedding, keyword_ids: list[int], recent_ids: list[int],
                load_vectors: Callable[[list[int]], list[tuple[int, bytes | None, str | None]]],
                config, limit: int, keyword_scores: dict[int, float] | None = None,
                fusion: str = RANK, beside: Beside | None = None
                ) -> tuple[list[Ranked], str]:
    """Keyword ranks fused with similarity ranks, or with `fusion` SCORE their scores
    (score_fused); keywords alone without an embedder; recency (the higher id) breaks ties.
    `keyword_ids` are best first; without scores their ranks stand in for them. Only rows at
    least NIMBUS_MEMORY_MIN_SIMILARITY alike get a similarity rank, so a row needs a keyword hit
    or real likeness to be returned at all. With score fusion and `beside` (which reads the rows
    next to the given ones: (id, the given row's id, vector, model)), a row also gets
    CONTEXT_SHARE of the score of the best of the first CONTEXT_HITS x limit rows it is next to
    (with_context)."""
    keyword = keyword_scores if keyword_scores is not None else {
        id_: 1.0 / rank for rank, id_ in enumerate(keyword_ids, 1)}
    keyword_rank = {id_: rank for rank, id_ in enumerate(best_first(keyword), 1)}
    candidates = list(dict.fromkeys([*keyword_rank, *recent_ids]))
    similarity: dict[int, float] = {}
    embedder, mode, context = embedding.embedder, HYBRID, {}
    try:
        query_vector = embedding.vector()
        similarity = similarities(load_vectors(candidates), query_vector, embedder.name)
    except EmbedderUnavailable as error:
        if embedder is not None:
            log.warning("embedder unavailable, recalling by keywords: %s", error)
        mode = KEYWORDS
    if mode == HYBRID:
        floor = config["NIMBUS_MEMORY_MIN_SIMILARITY"]
        weight = config["NIMBUS_MEMORY_KEYWORD_WEIGHT"]
        if fusion == SCORE:
            relevant = score_fused(keyword, similarity, weight, floor)
            if beside is not None and relevant:
                relevant, context = with_context(
                    relevant, best_first(relevant)[:CONTEXT_HITS * limit], beside, keyword,
                    similarity, query_vector, embedder.name, weight, floor)
        else:
            alike = {i: s for i, s in similarity.items() if s >= floor}
            similarity_rank = {id_: rank for rank, id_ in enumerate(best_first(alike), 1)}
            relevant = fused(keyword_rank, similarity_rank, weight)
        best = best_first(relevant)
    else:
        best = best_first(keyword)
    return [Ranked(i, why(i, keyword_rank, similarity, mode, context), similarity.get(i))
            for i in best[:limit]], mode


def similarities(rows, query_vector: np.ndarray, model: str) -> dict[int, float]:
    """{id: cosine to the query} of the (id, vector, model) rows with a vector of `model`."""
    rows = [(id_, data) for id_, data, stored in rows if data and stored == model]
    if not rows:
        return {}
    matrix = stacked([data for _, data in rows])
    return dict(zip((id_ for id_, _ in rows), (matrix @ query_vector).tolist()))


def with_context(relevant: dict[int, float], hits: list[int], beside: Beside,
                 keyword: dict[int, float], similarity: dict[int, float],
                 query_vector: np.ndarray, model: str, weight: float, floor: float
                 ) -> tuple[dict[int, float], dict[int, int]]:
    """Scores with context: a turn next to one of `hits` (the same conversation, one turn before
    or after) gets CONTEXT_SHARE of that hit's score on top of its own, so the reply that says
    "it was amazing, I felt so tiny" is found with the turn about the meteor shower it answers.
    The neighbours that were not candidates are scored as they would have been (their vectors
    read with them), then all are fused again. Returns the scores and {row: the hit it is next
    to} of the rows that got such a share."""
    rows = beside(hits)
    similarity.update(similarities([(id_, data, stored) for id_, _, data, stored in rows
                                    if id_ not in similarity], query_vector, model))
    scores = score_fused(keyword, similarity, weight, floor)
    best_hit: dict[int, int] = {}
    for id_, hit, _, _ in rows:
        if hit in scores and scores[hit] > scores.get(best_hit.get(id_), 0.0):
            best_hit[id_] = hit
    boosted = dict(scores)
    for id_, hit in best_hit.items():
        boosted[id_] = scores.get(id_, 0.0) + CONTEXT_SHARE * scores[hit]
    return boosted, best_hit


def stacked(blobs: list[bytes]) -> np.ndarray:
    """One row per vector: the bytes joined and read once, rather than an array made per row
    and copied again into the matrix (vectors of unequal length stack as before, and fail so)."""
    if len({len(blob) for blob in blobs}) == 1:
        return from_bytes(b"".join(blobs)).reshape(len(blobs), -1)
    return np.vstack([from_bytes(blob) for blob in blobs])


def why(id_, keyword_rank, similarity, mode, context=None) -> str:
    parts = []
    if mode == HYBRID:
        parts.append(f"similarity {similarity[id_]:.2f}" if id_ in similarity else "no vector")
    if id_ in keyword_rank:
        parts.append(f"keyword rank {keyword_rank[id_]}")
    if context and id_ in context:
        parts.append("next to a match")
    return " · ".join(parts)


def search(scope: SessionScope, query: str, config, limit: int = 5) -> tuple[list, str]:
    """[(memory, why)] best first, within the session's scope, and the mode that ranked them."""
    embedding = QueryEmbedding(config, query)  # computed while the candidates are found
    pool = max(config["NIMBUS_MEMORY_CANDIDATE_POOL"], 1)
    form, condition, values = scope.bound()
    key = (scope.tenant_id, scope.subject_id, tuple(sorted(scope.orders.values())))
    branches = branches_bound(*scope.shape)
    scores, matches = memory_matches(condition, query, pool, key, values, form, branches)
    recent = []
    if similarity_alone_may_place(len(scores), limit, config):
        recent = read(built((*form, "newest"), lambda: newest_in(
            branches, [Memory.id, Memory.embedding, Memory.embedding_model],
            Memory.id, bindparam("row_limit"))), {**values, "row_limit": max(pool // 2, 1)}).all()

    def vectors(ids: list[int]):
        """Both candidate lists came with their vectors: no further query."""
        return [*matches, *recent]
    ranked, mode = rank_hybrid(embedding, [], [row[0] for row in recent], vectors, config, limit,
                               keyword_scores=scores)
    rows = {m.id: m for m in db.session.scalars(select(Memory).where(
        Memory.id.in_([r.id for r in ranked])))}
    return [(rows[r.id], r.why) for r in ranked], mode


def for_prompt(scope: SessionScope, config, query: str | None = None) -> tuple[list, str]:
    """What goes into the prompt: the newest N; with search on and a question, the best N first."""
    limit = config["NIMBUS_MEMORY_BLOCK_LIMIT"]
    found, mode = ([], RECENCY)
    if query and config.get("NIMBUS_MEMORY_SEARCH"):
        found, mode = search(scope, query, config, limit)
    seen = {m.id for m, _ in found}
    fill = [(m, f"recency rank {rank}") for rank, m in enumerate(newest(scope, limit), 1)
            if m.id not in seen]
    return found + fill[:limit - len(found)], mode
