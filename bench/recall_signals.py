"""Both recall corpora's signals per question, kept in a file, so fusions can be compared in
seconds instead of a full search run each (bench/recall_fusion.py reads it).

For every question with evidence, over all of its person's turns (a person of either corpus has
about 300 turns, all within the product's candidate pool of 600 keyword hits + 300 newest): the
product's keyword scores (turn_matches, BM25 with the person's statistics), the cosine of the
turn's one vector (question + answer, as stored today) and of its best sentence, the evidence
turns, and the question's kind. Turn ids are the order of recency, as in the product.
Run: .venv/bin/python bench/recall_signals.py OUT.pickle [--locomo PATH] [--quick]
"""
import argparse
import os
import pickle
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.recall import cache_vectors  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.memories.search.embeddings import MiniLMEmbedder  # noqa: E402
from webapp.memories.search.keywords import turn_matches  # noqa: E402
from bench.sentences import sentences  # noqa: E402
from webapp.models import Conversation, Turn  # noqa: E402

POOL = 600


def questions_locomo(path: str, quick: bool):
    """[(user, text, kind, wanted turn ids)] of LoCoMo, imported as bench/recall_real.py does."""
    from bench.locomo import CATEGORIES, load as load_corpus
    from bench.recall_real import store
    samples = load_corpus(path)[:3 if quick else None]
    users, turn_ids, _ = store(samples)
    out = []
    for sample in samples:
        place = sample.turn_of()
        for q in sample.questions:
            wanted = {turn_ids[(sample.id, *place[d])] for d in q.evidence if d in place}
            if wanted:
                out.append((users[sample.id], q.text, CATEGORIES.get(q.category, str(q.category)),
                            wanted, sample.id))
    return out


def questions_bench(quick: bool):
    from bench.recall import load
    from bench.recall_corpus import build
    corpus = build(3 if quick else 10)
    users, turn_ids, _ = load(corpus)
    return [(users[p.index], q.text, q.kind, {turn_ids[(p.index, s, t)] for s, t in q.evidence},
             p.index) for p in corpus for q in p.questions if q.kind != "unanswerable"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--locomo", help="LoCoMo's locomo10.json / .zip; else the bench corpus")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    cache_vectors()
    folder = tempfile.mkdtemp(prefix="nimbus-recall-signals-")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/bench.db"})
    with app.app_context():
        create_schema()
        asked = questions_locomo(args.locomo, args.quick) if args.locomo else \
            questions_bench(args.quick)
        rows = db.session.execute(
            db.select(Turn.id, Turn.question, Turn.answer, Conversation.user_id, Turn.seq,
                      Turn.conversation_id)
            .join(Conversation, Conversation.id == Turn.conversation_id).order_by(Turn.id)).all()
        embedder = MiniLMEmbedder()
        turn_matrix = embedder.embed([f"{r.question}\n{r.answer}" for r in rows])
        texts, owner = [], []
        for n, r in enumerate(rows):
            for piece in sentences(r.question, r.answer):
                texts.append(piece)
                owner.append(n)
        started = time.perf_counter()
        pieces = embedder.embed(texts)
        print(f"{len(texts)} sentences for {len(rows)} turns ({len(texts) / len(rows):.1f} a turn)"
              f" in {time.perf_counter() - started:.1f} s")
        owner = np.array(owner)
        ids = np.array([r.id for r in rows])
        conversation, seq = (np.array([r.conversation_id for r in rows]),
                             np.array([r.seq for r in rows]))
        user_of = np.array([r.user_id for r in rows])
        queries = embedder.embed([a[1] for a in asked])
        out = []
        for (user, text, kind, wanted, person), qv in zip(asked, queries):
            mine = np.flatnonzero(user_of == user.id)
            keyword, _ = turn_matches(user, text, POOL)
            best = np.full(len(rows), -2.0)
            np.maximum.at(best, owner, pieces @ qv)
            out.append({"person": person, "kind": kind, "text": text, "wanted": wanted,
                        "ids": ids[mine], "keyword": np.array([keyword.get(i, 0.0)
                                                               for i in ids[mine]]),
                        "turn": turn_matrix[mine] @ qv, "sentence": best[mine],
                        "conversation": conversation[mine], "seq": seq[mine]})
        with open(args.out, "wb") as file:
            pickle.dump(out, file)
        print(f"{len(out)} questions written to {args.out}")


if __name__ == "__main__":
    main()
