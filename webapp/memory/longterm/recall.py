"""Recall: with search on (the default), hybrid ranking; off, keywords for a search and the
newest memories in scope for the prompt block.

Hybrid = keyword relevance (BM25 with the scope's own term statistics, see ranking.py) fused with
cosine similarity (NIMBUS_MEMORY_KEYWORD_WEIGHT, the keyword share, tuned on bench/recall.py
--tune), over a bounded pool (the best keyword hits plus the newest rows, all within
scope). A row without a vector still ranks by keywords and sorts last; an embedder that is down
falls back to keywords alone, logged, and the caller only notices in quality.
"""
import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sqlalchemy import select

from ...extensions import db
from .embeddings import EmbedderUnavailable, QueryEmbedding, from_bytes
from .keywords import memory_matches
from .models import Memory
from .ranking import best_first
from .scopes import SessionScope
from .store import newest

log = logging.getLogger(__name__)
HYBRID, KEYWORDS, RECENCY = "hybrid", "keywords", "recency"


@dataclass
class Ranked:
    id: int
    why: str
    similarity: float | None = None


def fused(keyword: dict[int, float], similarity: dict[int, float], weight: float) -> dict:
    """weight x keyword score (as a share of the best one) + (1 - weight) x cosine similarity."""
    best = max(keyword.values(), default=0.0) or 1.0
    return {i: weight * keyword.get(i, 0.0) / best + (1 - weight) * similarity.get(i, 0.0)
            for i in set(keyword) | set(similarity)}


def rank_hybrid(embedding: QueryEmbedding, keyword_ids: list[int], recent_ids: list[int],
                load_vectors: Callable[[list[int]], list[tuple[int, bytes | None, str | None]]],
                config, limit: int, keyword_scores: dict[int, float] | None = None
                ) -> tuple[list[Ranked], str]:
    """Keyword relevance fused with similarity (keywords alone without an embedder); recency
    (the higher id) only breaks ties. `keyword_ids` are best first; without scores their ranks
    stand in for them."""
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
            matrix = np.vstack([from_bytes(data) for _, data in rows])
            similarity = dict(zip((id_ for id_, _ in rows), (matrix @ query_vector).tolist()))
    except EmbedderUnavailable as error:
        if embedder is not None:
            log.warning("embedder unavailable, recalling by keywords: %s", error)
        mode = KEYWORDS
    if mode == HYBRID:
        floor = config["NIMBUS_MEMORY_MIN_SIMILARITY"]
        relevant = {i: s for i, s in fused(keyword, similarity, config[
            "NIMBUS_MEMORY_KEYWORD_WEIGHT"]).items()
            if i in keyword_rank or similarity.get(i, -1) >= floor}
        # Vectorless rows (keyword hits only) sort after every row with a vector.
        best = sorted(relevant, key=lambda i: (i not in similarity, -round(relevant[i], 9), -i))
    else:
        best = best_first(keyword)
    return [Ranked(i, why(i, keyword_rank, similarity, mode), similarity.get(i))
            for i in best[:limit]], mode


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
    scores, matches = memory_matches(scope.applies_clause, query, pool)
    recent = db.session.execute(select(Memory.id, Memory.embedding, Memory.embedding_model)
                                .where(scope.applies_clause)
                                .order_by(Memory.id.desc()).limit(max(pool // 2, 1))).all()

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
