"""Recall: with search on (the default), hybrid ranking; off, keywords for a search and the
newest memories in scope for the prompt block.

Hybrid = the rank by keyword relevance (BM25 with the scope's own term statistics, see ranking.py)
fused with the rank by cosine similarity (weighted reciprocal-rank fusion; NIMBUS_MEMORY_KEYWORD_
WEIGHT, the keyword share, chosen on bench/recall.py --tune), over a bounded pool (the best keyword
hits plus the newest rows, all within scope). A row without a vector ranks by its keywords alone;
an embedder that is down falls back to keywords alone, logged, and the caller only notices in
quality.
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


def similarity_alone_may_place(keyword_hits: int, limit: int, config) -> bool:
    """Whether a row with no keyword hit can be among the first `limit`: its best fused score,
    (1 - w) / (K + 1), must beat the keyword row at rank `limit`, w / (K + limit). With w 0.8
    it cannot once `limit` (up to 183) keyword hits are found, so the newest rows, read only to
    offer such rows, need not be read then (nor compared)."""
    weight = config["NIMBUS_MEMORY_KEYWORD_WEIGHT"]
    return keyword_hits < limit or weight * (RRF_K + 1) <= (1 - weight) * (RRF_K + limit)


def rank_hybrid(embedding: QueryEmbedding, keyword_ids: list[int], recent_ids: list[int],
                load_vectors: Callable[[list[int]], list[tuple[int, bytes | None, str | None]]],
                config, limit: int, keyword_scores: dict[int, float] | None = None
                ) -> tuple[list[Ranked], str]:
    """Keyword ranks fused with similarity ranks (keywords alone without an embedder); recency
    (the higher id) breaks ties. `keyword_ids` are best first; without scores their ranks stand
    in for them. Only rows at least NIMBUS_MEMORY_MIN_SIMILARITY alike get a similarity rank, so
    a row needs a keyword hit or real likeness to be returned at all."""
    keyword = keyword_scores if keyword_scores is not None else {
        id_: 1.0 / rank for rank, id_ in enumerate(keyword_ids, 1)}
    keyword_rank = {id_: rank for rank, id_ in enumerate(best_first(keyword), 1)}
    candidates = list(dict.fromkeys([*keyword_rank, *recent_ids]))
    similarity: dict[int, float] = {}
    embedder, mode = embedding.embedder, HYBRID
    try:
        query_vector = embedding.vector()
        rows = [(id_, data) for id_, data, model in load_vectors(candidates)
                if data and model == embedder.name]
        if rows:
            matrix = stacked([data for _, data in rows])
            similarity = dict(zip((id_ for id_, _ in rows), (matrix @ query_vector).tolist()))
    except EmbedderUnavailable as error:
        if embedder is not None:
            log.warning("embedder unavailable, recalling by keywords: %s", error)
        mode = KEYWORDS
    if mode == HYBRID:
        floor = config["NIMBUS_MEMORY_MIN_SIMILARITY"]
        alike = {i: s for i, s in similarity.items() if s >= floor}
        similarity_rank = {id_: rank for rank, id_ in enumerate(best_first(alike), 1)}
        relevant = fused(keyword_rank, similarity_rank, config["NIMBUS_MEMORY_KEYWORD_WEIGHT"])
        best = best_first(relevant)
    else:
        best = best_first(keyword)
    return [Ranked(i, why(i, keyword_rank, similarity, mode), similarity.get(i))
            for i in best[:limit]], mode


def stacked(blobs: list[bytes]) -> np.ndarray:
    """One row per vector: the bytes joined and read once, rather than an array made per row
    and copied again into the matrix (vectors of unequal length stack as before, and fail so)."""
    if len({len(blob) for blob in blobs}) == 1:
        return from_bytes(b"".join(blobs)).reshape(len(blobs), -1)
    return np.vstack([from_bytes(blob) for blob in blobs])


def why(id_, keyword_rank, similarity, mode) -> str:
    parts = []
    if mode == HYBRID:
        parts.append(f"similarity {similarity[id_]:.2f}" if id_ in similarity else "no vector")
    if id_ in keyword_rank:
        parts.append(f"keyword rank {keyword_rank[id_]}")
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
