"""Benchmark: does conversation search find old evidence? Keyword, hybrid and default ranking.

A corpus the project generates itself (bench/recall_corpus.py: 10 users x 20 sessions x 15
turns of everyday conversation with planted facts, no download) is imported into a fresh SQLite
database, every turn is embedded in batches, and each question is searched among its user's own
turns with the app's conversation search (the `search_history` tool, `flask search`, the sidebar)
in the modes keyword (NIMBUS_MEMORY_SEARCH off), similarity (MiniLM alone, exact), hybrid (on:
score fusion, NIMBUS_HISTORY_FUSION=score), rank fusion (NIMBUS_HISTORY_FUSION=rank, the fusion
before) and default (the configuration's defaults); the order of keyword, similarity and hybrid is
printed for comparison with bench/recall_real.py's on LoCoMo. A question counts as found at k when all its evidence turns are in the top k.
Unanswerable questions have no evidence: for them the figure is how often nothing was returned.
Hybrid weights were tuned on users 0-4 (bench/recall.py --tune); the held-out line is users 5-9.
--forms compares ways of embedding a turn (similarity alone).
Run: .venv/bin/python bench/recall.py [--quick] [--tune] [--forms]
"""
import argparse
import hashlib
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.recall_corpus import build, import_file  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import get_or_create_tenant, get_or_create_user  # noqa: E402
from webapp.config import DEFAULTS  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.memories.search.embeddings import MINILM_NAME, MiniLMEmbedder, from_bytes, get_embedder
from webapp.memories.search.conversations import search_turns, store_turn_vectors  # noqa: E402
from webapp.memories.models import TurnVector  # noqa: E402
from webapp.models import Conversation, Turn  # noqa: E402
from webapp.transfer import import_conversation  # noqa: E402

KINDS = ["detail", "paraphrase", "order number", "speaker", "two-session", "date", "unanswerable"]
TUNING_USERS = range(0, 5)


def load(corpus) -> tuple[dict, dict, dict]:
    """Import every session as a conversation: users by index, turn ids by (user, session, turn),
    and the session of each conversation id."""
    tenant = get_or_create_tenant("recall-bench", "Recall Bench")
    users, turn_ids, sessions = {}, {}, {}
    for person in corpus:
        user = get_or_create_user(tenant, f"user{person.index}@bench.invalid", person.name)
        db.session.commit()
        users[person.index] = user
        for s, session in enumerate(person.sessions):
            conversation = import_conversation(import_file(session), user)
            sessions[conversation.id] = s
            for turn in conversation.turns:
                turn_ids[(person.index, s, turn.seq)] = turn.id
    return users, turn_ids, sessions


def cache_vectors() -> None:
    """Vectors of texts seen before come from a file next to the temporary folders: the corpus is
    deterministic, and embedding 3,000 long turns again on every run would take minutes."""
    path = os.path.join(tempfile.gettempdir(), f"nimbus-recall-{MINILM_NAME}.npz")
    cache = dict(np.load(path)) if os.path.exists(path) else {}
    embed = MiniLMEmbedder.embed

    def cached(self, texts):
        if len(texts) < 2:  # a query: timed as a user would wait for it
            return embed(self, texts)
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in cache]
        if missing:
            for i, row in zip(missing, embed(self, [texts[i] for i in missing])):
                cache[keys[i]] = row
            np.savez(path, **cache)
        return np.vstack([cache[k] for k in keys])
    MiniLMEmbedder.embed = cached


def embed_all(config) -> float:
    started = time.perf_counter()
    turns = db.session.scalars(db.select(Turn).order_by(Turn.id)).all()
    for start in range(0, len(turns), 256):
        store_turn_vectors(turns[start:start + 256], config)
    return time.perf_counter() - started


def vector_search(embedding_config):
    """Similarity alone, exact: every one of the person's turns by cosine to the question."""
    embedder = get_embedder(embedding_config)
    by_user: dict[int, tuple[list[int], np.ndarray]] = {}

    def search(user, text, config, limit):
        if user.id not in by_user:
            rows = db.session.execute(
                db.select(TurnVector.turn_id, TurnVector.embedding).join(
                    Turn, Turn.id == TurnVector.turn_id).join(Turn.conversation)
                .where(Turn.conversation.has(user_id=user.id))).all()
            by_user[user.id] = ([r[0] for r in rows], np.vstack([from_bytes(r[1]) for r in rows]))
        ids, matrix = by_user[user.id]
        scores = matrix @ embedder.embed([text])[0]
        best = [ids[i] for i in np.argsort(-scores)[:limit]]
        turns = {t.id: t for t in db.session.scalars(db.select(Turn).where(Turn.id.in_(best)))}
        return [{"conversation_id": turns[i].conversation_id, "turn": turns[i].seq}
                for i in best], "similarity"
    return search


FORMS = {  # how a turn is embedded: its pieces, each a vector; a turn scores its best piece's
    "question + answer": lambda q, a: [f"{q}\n{a}"],  # what the app stores (turn_text)
    "question": lambda q, a: [q],
    "answer": lambda q, a: [a],
    "better of the two": lambda q, a: [q, a],
    "best sentence": lambda q, a: [p for p in re.split(r"(?<=[.!?])\s+", f"{q}\n{a}") if p],
}


def forms(corpus, loaded) -> None:
    """Similarity alone, exact, with every turn embedded in each form of FORMS: which form
    matches the questions best, per kind (found in the top 10)."""
    embedder, queries = MiniLMEmbedder(), {}
    rows = db.session.execute(db.select(Turn.id, Turn.conversation_id, Turn.seq, Turn.question,
                                        Turn.answer, Conversation.user_id)
                              .join(Conversation, Conversation.id == Turn.conversation_id)).all()

    def searcher(matrix, owners, turn_of):
        def search(user, text, config, limit):
            if text not in queries:
                queries[text] = embedder.embed([text])[0]
            scores = np.where(owners == user.id, matrix @ queries[text], -2.0)
            best = {}
            for i in np.argsort(-scores):
                if scores[i] < -1 or len(best) == limit:
                    break
                best.setdefault(turn_of[i], None)
            return [{"conversation_id": rows_by_id[t].conversation_id, "turn": rows_by_id[t].seq}
                    for t in best], "similarity"
        return search
    rows_by_id = {row.id: row for row in rows}
    results = {}
    for name, pieces in FORMS.items():
        texts, turn_of, owners = [], [], []
        for row in rows:
            for piece in pieces(row.question, row.answer):
                texts.append(piece)
                turn_of.append(row.id)
                owners.append(row.user_id)
        started = time.perf_counter()
        matrix = embedder.embed(texts)
        print(f"{name}: {len(texts)} vectors ({time.perf_counter() - started:.1f} s)")
        results[name] = evaluate(corpus, loaded, {}, search=searcher(
            matrix, np.array(owners), turn_of))
    print("\nsimilarity alone, found in top 10, by how a turn is embedded")
    table(results, 1)
    print("\nfound in top 5")
    table(results, 0)


def evaluate(corpus, loaded, config, users_only=None, search=search_turns
             ) -> tuple[dict, list[float]]:
    """{kind: [(found@5, found@10)]} and the latency of every search, in ms."""
    users, turn_ids, sessions = loaded
    found, times = defaultdict(list), []
    for person in corpus:
        if users_only is not None and person.index not in users_only:
            continue
        for question in person.questions:
            started = time.perf_counter()
            results, _ = search(users[person.index], question.text, config, limit=10)
            times.append((time.perf_counter() - started) * 1000)
            got = [turn_ids[(person.index, sessions[r["conversation_id"]], r["turn"])]
                   for r in results]
            if question.kind == "unanswerable":
                found[question.kind].append((not got, not got))
                continue
            wanted = {turn_ids[(person.index, s, t)] for s, t in question.evidence}
            found[question.kind].append((wanted <= set(got[:5]), wanted <= set(got[:10])))
    return found, times


def percent(pairs, at: int) -> float:
    return 100 * sum(p[at] for p in pairs) / max(len(pairs), 1)


def recall_at_10(found, users=None) -> float:
    pairs = [p for kind, ps in found.items() if kind != "unanswerable" for p in ps]
    return percent(pairs, 1)


def modes(app_config) -> dict:
    memory_defaults = {k: v for k, v in DEFAULTS.items() if k.startswith("NIMBUS_MEMORY")}
    return {"keyword": {**app_config, "NIMBUS_MEMORY_SEARCH": False},
            "similarity": {**app_config, "NIMBUS_MEMORY_SEARCH": True},
            "hybrid": {**app_config, "NIMBUS_MEMORY_SEARCH": True,
                       "NIMBUS_HISTORY_FUSION": "score"},
            "rank fusion": {**app_config, "NIMBUS_MEMORY_SEARCH": True,
                            "NIMBUS_HISTORY_FUSION": "rank"},
            "default": {**app_config, **memory_defaults,
                        "NIMBUS_HISTORY_FUSION": DEFAULTS["NIMBUS_HISTORY_FUSION"]}}


ORDERED = ("keyword", "similarity", "hybrid")


def order(cells: dict[str, float]) -> str:
    """The modes keyword, similarity and hybrid best first, as "hybrid 76.1 > keyword 71.3 >
    similarity 59.1" (= where equal): the order bench/recall_real.py compares with LoCoMo's."""
    ranked = sorted(ORDERED, key=lambda m: -cells[m])
    text = f"{ranked[0]} {cells[ranked[0]]:.1f}"
    for before, mode in zip(ranked, ranked[1:]):
        text += f" {'=' if round(cells[mode], 1) == round(cells[before], 1) else '>'} {mode} " \
                f"{cells[mode]:.1f}"
    return text


def tune(corpus, loaded, hybrid: dict) -> None:
    """The grid the defaults were chosen from, on the tuning users only."""
    users = [p.index for p in corpus if p.index in TUNING_USERS]
    print(f"tuning on users {users[0]}-{users[-1]}: recall @10 (top 5) of answerable questions")
    for weight in (0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0):
        found, _ = evaluate(corpus, loaded, {**hybrid, "NIMBUS_MEMORY_KEYWORD_WEIGHT": weight},
                            users_only=users)
        pairs = [p for k, ps in found.items() if k != "unanswerable" for p in ps]
        cells = " ".join(f"{k} {percent(found[k], 1):.0f}" for k in KINDS if k in found)
        print(f"  keyword weight {weight:.1f}: {percent(pairs, 1):.1f} ({percent(pairs, 0):.1f})"
              f"  | {cells}")


def table(results: dict, at: int) -> None:
    """Kinds down, modes across, and which signal wins each kind."""
    names = list(results)
    width = max(12, *(len(m) + 2 for m in names))
    print(f"{'kind':<13}" + "".join(f"{m:>{width}}" for m in names) + "   questions  best")
    for kind in KINDS:
        cells = {m: percent(results[m][0].get(kind, []), at) for m in names}
        top = max(cells.values())
        best = ", ".join(m for m in names if cells[m] == top)
        print(f"{kind:<13}" + "".join(f"{cells[m]:>{width - 1}.1f}%" for m in names)
              + f"   {len(results[names[0]][0].get(kind, [])):>9}  {best}")
    print(f"{'answerable':<13}" + "".join(
        f"{recall_at_10(results[m][0]) if at else percent([p for k, ps in results[m][0].items() if k != 'unanswerable' for p in ps], 0):>{width - 1}.1f}%"
        for m in names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 users instead of 10")
    parser.add_argument("--tune", action="store_true",
                        help="grid-search the hybrid weights on the tuning users, then stop")
    parser.add_argument("--forms", action="store_true",
                        help="similarity alone with turns embedded in each form, then stop")
    parser.add_argument("--no-cache", action="store_true", help="embed every text afresh")
    args = parser.parse_args()
    if not args.no_cache:
        cache_vectors()
    corpus = build(3 if args.quick else 10)
    folder = tempfile.mkdtemp(prefix="nimbus-recall-")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/bench.db"})
    with app.app_context():
        create_schema()
        started = time.perf_counter()
        loaded = load(corpus)
        users, turn_ids, _ = loaded
        questions = sum(len(p.questions) for p in corpus)
        words = statistics.mean(len(f"{t['question']} {t['answer']}".split())
                                for p in corpus for s in p.sessions for t in s)
        print(f"corpus: {len(corpus)} users, {len(turn_ids)} turns ({words:.0f} words each on "
              f"average), {questions} questions (imported in {time.perf_counter() - started:.1f} s)")
        seconds = embed_all({**app.config, "NIMBUS_MEMORY_SEARCH": True})
        print(f"embedded {len(turn_ids)} turns in {seconds:.1f} s")
        if args.tune:
            return tune(corpus, loaded, modes(app.config)["hybrid"])
        if args.forms:
            return forms(corpus, loaded)
        results, held = {}, {}
        held_out = [p.index for p in corpus if p.index not in TUNING_USERS]
        for mode, config in modes(app.config).items():
            search = vector_search(config) if mode == "similarity" else search_turns
            search(next(iter(users.values())), "warm up", config, 10)
            results[mode] = evaluate(corpus, loaded, config, search=search)
            if held_out:
                held[mode] = recall_at_10(evaluate(corpus, loaded, config, held_out, search)[0])
        print("\nfound in top 10 (all evidence turns among them; unanswerable: nothing returned)")
        table(results, 1)
        print("\nfound in top 5")
        table(results, 0)
        print("\nlatency: " + ", ".join(
            f"{m} median {statistics.median(t):.1f} ms p95 {np.percentile(t, 95):.1f} ms"
            for m, (_, t) in results.items()))
        if held_out:
            print(f"held-out users {held_out[0]}-{held_out[-1]} (never used for tuning) @10: "
                  + ", ".join(f"{m} {v:.1f} %" for m, v in held.items()))
        answerable = {m: [p for k, ps in f.items() if k != "unanswerable" for p in ps]
                      for m, (f, _) in results.items()}
        for at in (1, 0):
            print(f"order @{10 if at else 5}: " + order({m: percent(p, at)
                                                        for m, p in answerable.items()}))
        summary = {m: (recall_at_10(f), float(np.percentile(t, 95))) for m, (f, t) in results.items()}
        print(f"\nrecall @10: keyword {summary['keyword'][0]:.1f} %, hybrid "
              f"{summary['hybrid'][0]:.1f} %, default {summary['default'][0]:.1f} %; "
              f"p95 {summary['default'][1]:.1f} ms")


if __name__ == "__main__":
    main()
