"""Recall: the newest memories in scope by default; with search on, hybrid ranking.

Hybrid = keyword search (FTS5 / PostgreSQL full text) fused with cosine similarity by reciprocal
rank fusion, over a bounded pool (the best keyword hits plus the newest rows, all within scope).
A row without a vector still ranks by keywords and sorts last on similarity; an embedder that is
down falls back to keywords + recency, logged, and the caller only notices in quality.
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
from .scopes import SessionScope
from .store import newest

log = logging.getLogger(__name__)
RRF_K = 60  # the usual reciprocal-rank-fusion constant: dampens the head of each list
HYBRID, KEYWORDS_RECENCY, RECENCY = "hybrid", "keywords + recency", "recency"


@dataclass
class Ranked:
    id: int
    why: str
    similarity: float | None = None


def fuse(rankings: list[list[int]]) -> dict[int, float]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, id_ in enumerate(ranking, 1):
            scores[id_] = scores.get(id_, 0.0) + 1.0 / (RRF_K + rank)
    return scores


def rank_hybrid(embedding: QueryEmbedding, keyword_ids: list[int], recent_ids: list[int],
                load_vectors: Callable[[list[int]], list[tuple[int, bytes | None, str | None]]],
                config, limit: int) -> tuple[list[Ranked], str]:
    """Fuse keyword ranks with similarity ranks (or recency ranks without an embedder)."""
    candidates = list(dict.fromkeys(keyword_ids + recent_ids))
    keyword_rank = {id_: rank for rank, id_ in enumerate(keyword_ids, 1)}
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
            log.warning("embedder unavailable, recalling by keywords and recency: %s", error)
        mode = KEYWORDS_RECENCY
    if mode == HYBRID:
        # Vectorless rows sort after every vector, newest first among themselves.
        order = sorted(candidates, key=lambda i: (i not in similarity, -similarity.get(i, 0), -i))
        floor = config["NIMBUS_MEMORY_MIN_SIMILARITY"]
        relevant = [i for i in candidates if i in keyword_rank or similarity.get(i, -1) >= floor]
    else:
        order = sorted(candidates, key=lambda i: -i)
        relevant = [i for i in candidates if i in keyword_rank]
    other_rank = {id_: rank for rank, id_ in enumerate(order, 1)}
    scores = fuse([keyword_ids, order])
    best = sorted(relevant, key=lambda i: (-scores[i], -i))[:limit]
    return [Ranked(i, why(i, keyword_rank, similarity, other_rank, mode), similarity.get(i))
            for i in best], mode


def why(id_, keyword_rank, similarity, other_rank, mode) -> str:
    parts = []
    if mode == HYBRID:
        parts.append(f"similarity {similarity[id_]:.2f}" if id_ in similarity else "no vector")
    if id_ in keyword_rank:
        parts.append(f"keyword rank {keyword_rank[id_]}")
    if mode != HYBRID:
        parts.append(f"recency rank {other_rank[id_]}")
    return " · ".join(parts)


def search(scope: SessionScope, query: str, config, limit: int = 5) -> tuple[list, str]:
    """[(memory, why)] best first, within the session's scope, and the mode that ranked them."""
    embedding = QueryEmbedding(config, query)  # computed while the candidates are found
    half = max(config["NIMBUS_MEMORY_CANDIDATE_POOL"] // 2, 1)
    matches = memory_matches(scope.applies_clause, query, half)
    recent = db.session.execute(select(Memory.id, Memory.embedding, Memory.embedding_model)
                                .where(scope.applies_clause)
                                .order_by(Memory.id.desc()).limit(half)).all()
    keyword_ids, recent_ids = [row[0] for row in matches], [row[0] for row in recent]

    def vectors(ids: list[int]):
        """Both candidate lists came with their vectors: no further query."""
        return [*matches, *recent]
    ranked, mode = rank_hybrid(embedding, keyword_ids, recent_ids, vectors, config, limit)
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
