"""Leads for the next recall step, measured on LoCoMo in the bench only (bench/recall_real.py
--leads): a vector per line or per sentence instead of per turn, and a fusion of scores, not
only of ranks (score fusion with context is now conversation search's: recall.score_fused,
recall.with_context). None of the rest is product code.

- sim-line, sim-sent: similarity alone, exact, a turn scoring its best line (question or
  answer) or best sentence (each side split at . ! ?);
- rrf-sent: rank fusion (recall.fused, keyword weight 0.8, similarity floor 0.2: conversation
  search's before score fusion) with the product's keyword scores (turn_matches) and sentence
  similarity in place of the turn vector;
- score-turn, score-sent: w x BM25 / the query's best BM25 + (1 - w) x (cosine - floor) / (the
  query's best cosine - floor), 0 below the floor; w is chosen on the first half of the people
  and the other half is shown apart as held out.
Searches are exact over all of a person's turns (a LoCoMo person has about 300, under the
product's pool of 600); the keyword scores and query vectors are computed once per question,
so the latencies printed for these columns are not a product's.
"""
import re
import time

import numpy as np

from webapp.extensions import db
from webapp.memories.models import TurnVector
from webapp.memories.search.bm25 import best_first
from webapp.memories.search.embeddings import MiniLMEmbedder, from_bytes
from webapp.memories.search.keywords import turn_matches
from webapp.memories.search.recall import fused
from webapp.models import Conversation, Turn

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
POOL, FLOOR, RRF_WEIGHT = 600, 0.2, 0.8
WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def pieces(form: str, question: str, answer: str) -> list[str]:
    if form == "line":
        return [p for p in (question, answer) if p]
    return [p for side in (question, answer) for p in SENTENCE_END.split(side) if p.strip()]


class Index:
    """Per person: their turns, and each form's vectors with the turn each belongs to."""

    def __init__(self):
        rows = db.session.execute(
            db.select(Turn.id, Turn.conversation_id, Turn.seq, Turn.question, Turn.answer,
                      Conversation.user_id, TurnVector.embedding)
            .join(Conversation, Conversation.id == Turn.conversation_id)
            .join(TurnVector, TurnVector.turn_id == Turn.id).order_by(Turn.id)).all()
        self.embedder, self.queries, self.keywords = MiniLMEmbedder(), {}, {}
        self.turns = {}  # user id: [rows]
        for row in rows:
            self.turns.setdefault(row.user_id, []).append(row)
        self.forms = {"turn": {u: (np.vstack([from_bytes(r.embedding) for r in rs]),
                                   np.arange(len(rs))) for u, rs in self.turns.items()}}
        for form in ("line", "sentence"):
            texts, owner, users = [], [], []
            for user_id, rs in self.turns.items():
                for n, r in enumerate(rs):
                    for piece in pieces(form, r.question, r.answer):
                        texts.append(piece)
                        owner.append(n)
                        users.append(user_id)
            started = time.perf_counter()
            matrix, owner, users = self.embedder.embed(texts), np.array(owner), np.array(users)
            print(f"{form} vectors: {len(texts)} for {len(rows)} turns "
                  f"({len(texts) / len(rows):.1f} a turn), {time.perf_counter() - started:.1f} s")
            self.forms[form] = {u: (matrix[users == u], owner[users == u]) for u in self.turns}

    def similarity(self, user, text: str, form: str) -> dict[int, float]:
        """{turn id: its best piece's cosine to the question}."""
        if text not in self.queries:
            self.queries[text] = self.embedder.embed([text])[0]
        matrix, owner = self.forms[form][user.id]
        best = np.full(len(self.turns[user.id]), -2.0)
        np.maximum.at(best, owner, matrix @ self.queries[text])
        return {r.id: float(s) for r, s in zip(self.turns[user.id], best)}

    def keyword(self, user, text: str) -> dict[int, float]:
        if (user.id, text) not in self.keywords:
            self.keywords[(user.id, text)] = turn_matches(user, text, POOL)[0]
        return self.keywords[(user.id, text)]

    def results(self, user, scores: dict[int, float], limit: int):
        place = {r.id: r for r in self.turns[user.id]}
        return [{"conversation_id": place[i].conversation_id, "turn": place[i].seq}
                for i in best_first(scores)[:limit]], "lead"

    def similar(self, form: str):
        def search(user, text, config, limit):
            return self.results(user, self.similarity(user, text, form), limit)
        return search

    def rank_fusion(self, form: str):
        def search(user, text, config, limit):
            keyword = {i: r for r, i in enumerate(best_first(self.keyword(user, text)), 1)}
            alike = {i: s for i, s in self.similarity(user, text, form).items() if s >= FLOOR}
            similar = {i: r for r, i in enumerate(best_first(alike), 1)}
            return self.results(user, fused(keyword, similar, RRF_WEIGHT), limit)
        return search

    def score_fusion(self, form: str, weight: float):
        def search(user, text, config, limit):
            keyword = self.keyword(user, text)
            similar = self.similarity(user, text, form)
            top_keyword = max(keyword.values(), default=0) or 1
            top_similar = max(max(similar.values(), default=FLOOR) - FLOOR, 1e-9)
            scores = {i: weight * keyword.get(i, 0) / top_keyword
                      + (1 - weight) * max(s - FLOOR, 0) / top_similar for i, s in similar.items()}
            return self.results(user, {i: s for i, s in scores.items() if s > 0}, limit)
        return search


def overall(found, measure: int) -> float:
    rows = [r for rs in found.values() for r in rs]
    return 100 * sum(r[measure] for r in rows) / max(len(rows), 1)


def leads(samples, loaded, config, evaluate) -> dict:
    """The leads' results, as evaluate gives them, by column name."""
    index = Index()
    tuning, held_out = samples[:len(samples) // 2 or 1], samples[len(samples) // 2:]
    results = {"sim-line": evaluate(samples, loaded, config, index.similar("line")),
               "sim-sent": evaluate(samples, loaded, config, index.similar("sentence")),
               "rrf-sent": evaluate(samples, loaded, config, index.rank_fusion("sentence"))}
    for form, name in (("turn", "score-turn"), ("sentence", "score-sent")):
        print(f"\n{name}: evidence @10 (@5) by keyword weight w; tuning on "
              f"{len(tuning)} people, {len(held_out)} held out")
        grid = {}
        for weight in WEIGHTS:
            tuned, _ = evaluate(tuning, loaded, config, index.score_fusion(form, weight))
            held, _ = evaluate(held_out, loaded, config, index.score_fusion(form, weight))
            grid[weight] = overall(tuned, 1)
            print(f"  w {weight:.1f}: tuning {overall(tuned, 1):.1f} ({overall(tuned, 0):.1f})"
                  f"  held out {overall(held, 1):.1f} ({overall(held, 0):.1f})")
        weight = max(grid, key=grid.get)
        print(f"  chosen on the tuning people: w {weight:.1f}")
        results[name] = evaluate(samples, loaded, config, index.score_fusion(form, weight))
    return results
