"""Benchmark: memory recall latency over 100, 1,000, 10,000 and 100,000 memories in one scope,
then for a customer with 100 memories in a shop of 100,000 about 2,000 other customers, and
conversation search over 10,000 turns of one person.

For each size, one customer of a fresh tenant gets that many memories (SQLite in a temporary
folder, FTS5 index, all-MiniLM-L6-v2 vectors), then two recalls are timed:
  recency: the prompt block's default, the newest N in scope;
  hybrid:  search with keywords (FTS5) fused with cosine similarity over the bounded candidate
           pool, the query's embedding included in the time.
Vectors come from real MiniLM embeddings of 300 distinct sentences, each reused with a little
noise, since embedding 11,100 texts one by one would take minutes and the ranking cost does not
depend on the values. Run: .venv/bin/python bench/memory_search.py
On a busy machine, bench/memory_search_against.py REV times the 10,000 rows against REV by turns.

Conversation search is timed twice. First on short made-up turns (about 100 characters, the
row earlier rounds reported). Then as people really use it: 10,000 turns of the recall corpus
(bench/recall_corpus.py: long, noisy, about 300 characters), imported the way `flask import`
stores them, in a shop where 50 other customers have 10,000 turns of their own, searched with
the corpus's own 26 questions a person (details, paraphrases, dates, who said it...).
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from sqlalchemy import func, insert, select  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import get_or_create_tenant, get_or_create_user  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.memories.search.embeddings import MINILM_NAME, MiniLMEmbedder, to_bytes  # noqa: E402
from webapp.memories.search.conversations import search_turns  # noqa: E402
from webapp.memories.models import Memory, TurnVector  # noqa: E402
from webapp.models import Conversation, Turn, User  # noqa: E402
from webapp.plurals import plural  # noqa: E402
from webapp.memories.search.recall import for_prompt, search  # noqa: E402
from webapp.memories.store.scopes import SessionScope  # noqa: E402

SIZES = [100, 1_000, 10_000, 100_000]
TURNS = 10_000  # one person's turns for the conversation-search row
REPEATS = 200
SUBJECTS = ["email", "phone calls", "the back door", "weekend deliveries", "gift wrapping",
            "paper invoices", "express shipping", "the espresso grinder", "wool socks",
            "rain jackets", "card payments", "bank transfers", "the loyalty card", "returns",
            "the desk lamp"]
VERBS = ["prefers", "dislikes", "asked about", "complained about", "always wants",
         "never wants", "was happy with", "is waiting for", "wants updates on", "forgot about",
         "keeps asking about", "recommended", "is allergic to", "collects", "budgets for",
         "needs help with", "returned", "reordered", "reviewed", "compared prices of"]
QUERIES = ["How should we contact this customer?", "Anything about deliveries?",
           "What do they think of the grinder?", "invoices", "How do they pay?",
           "Are they waiting for a parcel?", "gift wrapping preferences", "returns"]


def sentences() -> list[str]:
    return [f"The customer {verb} {subject}." for verb in VERBS for subject in SUBJECTS][:300]


def build(config, size: int, base_texts: list[str], base_vectors: np.ndarray) -> SessionScope:
    tenant = get_or_create_tenant(f"bench-{size}", f"Bench {size}")
    user = get_or_create_user(tenant, f"customer-{size}@bench.invalid", "Bench Customer")
    db.session.commit()
    rng = np.random.default_rng(size)
    rows = []
    for i in range(size):
        k = i % len(base_texts)
        vector = base_vectors[k] + rng.normal(0, 0.02, base_vectors.shape[1]).astype(np.float32)
        vector /= np.linalg.norm(vector)
        rows.append({"tenant_id": tenant.id, "subject_id": user.id, "source": "hand",
                     "content": f"{base_texts[k][:-1]} (note {i}).",
                     "embedding": to_bytes(vector), "embedding_model": MINILM_NAME})
    for start in range(0, len(rows), 1000):
        db.session.execute(insert(Memory), rows[start:start + 1000])
    db.session.commit()
    return SessionScope.for_user(user)


def build_shop(size: int, mine: int, base_texts: list[str], base_vectors: np.ndarray
               ) -> SessionScope:
    """A customer with about `mine` memories about their account in a shop whose `size` other
    memories are about 2,000 other customers (personal, like the distiller's), as a real shop's
    would be: the scope is small, the shop is not."""
    tenant = get_or_create_tenant("bench-shop-memories", "Bench shop memories")
    user = get_or_create_user(tenant, "customer@shop.invalid", "Shop Customer")
    db.session.execute(insert(User), [{"tenant_id": tenant.id, "email": f"c{i}@shop.invalid",
                                       "name": f"Customer {i}"} for i in range(2000)])
    db.session.commit()
    others = db.session.scalars(select(User.id).where(User.tenant_id == tenant.id,
                                                      User.id != user.id)).all()
    rows, every = [], (size + mine) // mine
    for i in range(size + mine):
        k = i % len(base_texts)
        # the customer's spread over the shop's history, as a customer who comes back now and then
        whom = user.id if i % every == every - 1 else others[i % len(others)]
        rows.append({"tenant_id": tenant.id, "subject_id": whom, "memorable_type": "account",
                     "memorable_id": whom, "source": "hand", "content": f"{base_texts[k][:-1]} "
                     f"(note {i}).", "embedding": to_bytes(base_vectors[k]),
                     "embedding_model": MINILM_NAME})
    for start in range(0, len(rows), 5000):
        db.session.execute(insert(Memory), rows[start:start + 5000])
    db.session.commit()
    return SessionScope.for_user(user)


def build_turns(size: int, base_texts: list[str], base_vectors: np.ndarray):
    """One person with `size` finished turns (100 conversations), each with a vector."""
    tenant = get_or_create_tenant("bench-turns", "Bench turns")
    user = get_or_create_user(tenant, "turns@bench.invalid", "Bench Turns")
    db.session.commit()
    rng = np.random.default_rng(size)
    per = size // 100
    conversations = [{"id": f"bench{c:027d}", "tenant_id": tenant.id, "user_id": user.id,
                      "title": f"Bench {c}", "turn_count": per} for c in range(100)]
    db.session.execute(insert(Conversation), conversations)
    turns, vectors = [], []
    first = (db.session.scalar(select(func.max(Turn.id))) or 0) + 1  # after other benches' turns
    for i in range(size):
        k = i % len(base_texts)
        turns.append({"id": first + i, "conversation_id": conversations[i // per]["id"],
                      "seq": i % per, "messages": [], "compact": [], "outcome": "answered",
                      "question": f"{base_texts[k][:-1]}, turn {i}?",
                      "answer": f"Noted: {base_texts[(k * 7) % len(base_texts)]}"})
        vector = base_vectors[k] + rng.normal(0, 0.02, base_vectors.shape[1]).astype(np.float32)
        vectors.append({"turn_id": first + i, "embedding": to_bytes(vector / np.linalg.norm(vector)),
                        "embedding_model": MINILM_NAME})
    for start in range(0, size, 1000):
        db.session.execute(insert(Turn), turns[start:start + 1000])
        db.session.execute(insert(TurnVector), vectors[start:start + 1000])
    db.session.commit()
    return user


def build_real_turns(size: int, base_vectors: np.ndarray):
    """One customer with `size` recall-corpus turns, imported, in a shop whose other customers
    have as many; every turn with a vector. Returns the customer and the questions to ask."""
    from bench.recall_corpus import build_user, import_file
    from webapp.transfer import import_conversation
    tenant = get_or_create_tenant("bench-shop", "Bench shop")
    user = get_or_create_user(tenant, "regular@bench.invalid", "Bench Regular")
    others = [get_or_create_user(tenant, f"other{i}@bench.invalid", f"Other {i}") for i in range(50)]
    db.session.commit()
    questions, imported, index = [], 0, 0
    while imported < size:
        corpus = build_user(index)
        index += 1
        questions += [q.text for q in corpus.questions]
        for s, session in enumerate(corpus.sessions):
            for who in (user, others[(index * 31 + s) % len(others)]):  # ids interleave
                import_conversation(import_file(session), who)
            imported += len(session)
            if imported >= size:
                break
    rng = np.random.default_rng(size)
    ids = db.session.scalars(select(Turn.id).join(Conversation).where(
        Conversation.tenant_id == tenant.id)).all()
    vectors = base_vectors[np.arange(len(ids)) % len(base_vectors)] + rng.normal(
        0, 0.02, (len(ids), base_vectors.shape[1])).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    db.session.execute(insert(TurnVector), [
        {"turn_id": i, "embedding": to_bytes(v), "embedding_model": MINILM_NAME}
        for i, v in zip(ids, vectors)])
    db.session.commit()
    return user, questions


def timed(call, repeats: int) -> list[float]:
    for _ in range(10):
        call(0)
    times = []
    for i in range(repeats):
        started = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), float(np.percentile(times, 95))


def embedding_throughput(config) -> None:
    """`memories embed` before and after batching, over the 300 turns of one recall-bench user:
    one text per model run and one commit per row, against batches on every core."""
    from bench.recall_corpus import build
    from bench.recall_corpus import import_file
    from webapp.memories.search.conversations import store_turn_vectors, turn_text
    from webapp.memories.models import TurnVector
    from webapp.models import Turn
    from webapp.transfer import import_conversation
    tenant = get_or_create_tenant("bench-embed", "Bench embed")
    user = get_or_create_user(tenant, "embed@bench.invalid", "Bench Embed")
    db.session.commit()
    for session in build(1)[0].sessions:
        import_conversation(import_file(session), user)
    turns = db.session.scalars(db.select(Turn).join(Turn.conversation)
                               .where(Turn.conversation.has(user_id=user.id))).all()
    embedder = MiniLMEmbedder()
    started = time.perf_counter()
    for turn in turns:  # what `memories embed` did: one text, one row, one commit at a time
        vector = embedder.embed([turn_text(turn)])[0]
        db.session.add(TurnVector(turn_id=turn.id, embedding=to_bytes(vector),
                                  embedding_model=MINILM_NAME))
        db.session.commit()
    one_by_one = time.perf_counter() - started
    db.session.execute(db.delete(TurnVector))
    db.session.commit()
    started = time.perf_counter()
    for start in range(0, len(turns), 256):
        store_turn_vectors(turns[start:start + 256], config)
    batched = time.perf_counter() - started
    print(f"embedding {len(turns)} turns: one at a time {one_by_one:.1f} s, batched "
          f"{batched:.1f} s on {plural(os.cpu_count(), 'core')}: {one_by_one / batched:.1f}x faster")


def main() -> None:
    folder = tempfile.mkdtemp(prefix="nimbus-bench-")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/bench.db"})
    with app.app_context():
        create_schema()
        started = time.perf_counter()
        embedder = MiniLMEmbedder()
        embedder.load()
        print(f"MiniLM loaded in {(time.perf_counter() - started) * 1000:.0f} ms")
        base_texts = sentences()
        base_vectors = embedder.embed(base_texts)
        embedding_throughput({**app.config, "NIMBUS_MEMORY_SEARCH": True})
        single = timed(lambda i: embedder.embed([QUERIES[i % len(QUERIES)]]), REPEATS)
        print(f"one query embedding: median {summary(single)[0]:.1f} ms, "
              f"p95 {summary(single)[1]:.1f} ms")
        recency_config = {**app.config, "NIMBUS_MEMORY_SEARCH": False}
        hybrid_config = {**app.config, "NIMBUS_MEMORY_SEARCH": True}
        results = {}
        for size in SIZES:
            scope = build(app.config, size, base_texts, base_vectors)
            recency = timed(lambda i: for_prompt(scope, recency_config), REPEATS)
            hybrid = timed(lambda i: search(scope, QUERIES[i % len(QUERIES)], hybrid_config,
                                            limit=10), REPEATS)
            results[size] = summary(recency), summary(hybrid)
            print(f"@{size:>6}: recency median {results[size][0][0]:.2f} ms, "
                  f"p95 {results[size][0][1]:.2f} ms | hybrid median {results[size][1][0]:.2f} "
                  f"ms, p95 {results[size][1][1]:.2f} ms "
                  f"(pool {app.config['NIMBUS_MEMORY_CANDIDATE_POOL']})")
        shop = build_shop(SIZES[-1], 100, base_texts, base_vectors)
        block = summary(timed(lambda i: for_prompt(shop, recency_config), REPEATS))
        found = summary(timed(lambda i: search(shop, QUERIES[i % len(QUERIES)], hybrid_config,
                                               limit=10), REPEATS))
        print(f"a customer's 100 memories in a shop of {SIZES[-1]} about 2000 others: recency "
              f"median {block[0]:.2f} ms, p95 {block[1]:.2f} ms | hybrid median {found[0]:.2f} "
              f"ms, p95 {found[1]:.2f} ms")
        user = build_turns(TURNS, base_texts, base_vectors)
        turns = summary(timed(lambda i: search_turns(user, QUERIES[i % len(QUERIES)],
                                                     hybrid_config, limit=10), REPEATS))
        print(f"conversation search @{TURNS} short made-up turns of one person: hybrid median "
              f"{turns[0]:.2f} ms, p95 {turns[1]:.2f} ms")
        regular, asked = build_real_turns(TURNS, base_vectors)
        real = summary(timed(lambda i: search_turns(regular, asked[i % len(asked)],
                                                    hybrid_config, limit=10), len(asked)))
        print(f"conversation search @{TURNS} imported recall-corpus turns of one person, "
              f"{len(asked)} questions: hybrid median {real[0]:.2f} ms, p95 {real[1]:.2f} ms")
        small, large = results[SIZES[1]][1], results[SIZES[-1]][1]
        print(f"growth: hybrid p95 @{SIZES[-1]} / @{SIZES[1]} = {large[1] / small[1]:.1f}x "
              f"for {SIZES[-1] // SIZES[1]}x the memories")
        (_, recency_p95), (_, hybrid_p95) = results[10_000]
        print(f"memory search @10000: recency p95 {recency_p95:.1f} ms, "
              f"similarity p95 {hybrid_p95:.1f} ms")


if __name__ == "__main__":
    main()
