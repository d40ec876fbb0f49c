"""Benchmark: search at the size of a shop. 2,000 customers share the shop's turns and memories;
memory search, conversation search and the prompt block are timed for a customer with few rows
and for one with many, with the shop's ten most common words among the questions, against a raw
indexed read of the same customer's rows (the newest pool of them) in the same run.

Turns are the recall corpus's realistic ones (bench/recall_corpus.py), bulk-inserted as finished
turns; memories are distilled-style sentences ("The customer prefers ...", "asked about order
..."), personal to their customer, as the distiller writes them. Keywords only (no vectors): the
cost measured is the index's. The size is a flag, since generating a million turns takes a while:
  .venv/bin/python bench/shop_search.py --turns 100000 --memories 10000
  .venv/bin/python bench/shop_search.py --database postgresql://... (an empty database)
A shop is built once and searched many times: `--database URL --reuse` searches a shop an earlier
run left there (what it needs to know is kept in a shop.json beside it, `--shop-file`), so a change
to the indexes or the searches is timed on the same rows; `--fingerprints` prints a digest of every
question's keyword scores and ranked rows per customer and kind, to show a change kept the results.
"""
import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from sqlalchemy import insert, select  # noqa: E402

from bench.recall_corpus import build_user  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import get_or_create_tenant  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.memories.search.conversations import newest_turns, search_turns  # noqa: E402
from webapp.memories.search.keywords import STOPWORDS, memory_matches, turn_matches  # noqa: E402
from webapp.memories.models import Memory  # noqa: E402
from webapp.memories.search.recall import for_prompt, search  # noqa: E402
from webapp.memories.store.scopes import branches_bound  # noqa: E402
from webapp.memories.store.scopes import SessionScope  # noqa: E402
from webapp.memories.store.rows import newest  # noqa: E402
from webapp.models import Conversation, Turn, User  # noqa: E402

VERBS = ["prefers", "asked about", "asked for", "complained about", "wants updates on",
         "returned", "reordered", "is waiting for", "was happy with", "dislikes"]
THINGS = ["express shipping", "the desk lamp", "gift wrapping", "paper invoices", "the rain jacket",
          "weekend deliveries", "card payments", "the coffee grinder", "the loyalty card",
          "email over phone calls", "the yoga mat", "bank transfers", "the backpack", "refunds"]
FEW, MANY = "few", "many"


def memory_text(rng: random.Random, i: int) -> str:
    """A memory as the distiller words one: about the customer, often about an order."""
    fact = f"The customer {rng.choice(VERBS)} {rng.choice(THINGS)}"
    if rng.random() < 0.5:
        return f"{fact} on order {rng.randrange(40000, 99999)}."
    return f"{fact}; they asked to be told when it changes (note {i})."


def owner(i: int, size: int, many: int, few: int, rest: list[int], every: int = 20) -> int:
    """Who row `i` of `size` is about: every `every`-th the busy customer's, ten the quiet one's
    (spread over the shop's history), the others round the rest."""
    if i % every == 0:
        return many
    return few if i % (size // 10 or 1) == 1 else rest[i % len(rest)]


def build_shop(turns: int, memories: int, customers: int, every: int = 20) -> dict:
    """The shop: `customers` customers, one with many rows (one turn in `every`, a twentieth of the
    memories) and one with few (ten turns, ten memories), the rest spread over the others.
    Returns the two and the texts."""
    tenant = get_or_create_tenant("shop", "Shop")
    db.session.execute(insert(User), [{"tenant_id": tenant.id, "email": f"c{i}@shop.invalid",
                                       "name": f"Customer {i}"} for i in range(customers)])
    db.session.commit()
    people = db.session.scalars(select(User.id).where(User.tenant_id == tenant.id)
                                .order_by(User.id)).all()
    many, few, rest = people[0], people[1], people[2:]
    rng, words = random.Random(36), Counter()
    conversation_of, conversations = {}, []
    corpus, session_rows, written, corpus_index = None, [], 0, 0
    batch = []
    for i in range(turns):
        whom = owner(i, turns, many, few, rest, every)
        if not session_rows:
            if corpus is None or not corpus.sessions:
                corpus = build_user(corpus_index)
                corpus_index += 1
            session_rows = list(corpus.sessions.pop())
        row = session_rows.pop()
        if whom not in conversation_of or i % 10 == 0:
            conversation_of[whom] = f"shop{len(conversations):028d}"
            conversations.append({"id": conversation_of[whom], "tenant_id": tenant.id,
                                  "user_id": whom, "title": "Shop", "turn_count": 10})
        words.update(w for w in f"{row['question']} {row['answer']}".lower().split()
                     if w.isalpha() and w not in STOPWORDS)
        batch.append({"conversation_id": conversation_of[whom], "seq": i, "messages": [],
                      "compact": [], "outcome": "answered", "question": row["question"],
                      "answer": row["answer"], "created_at": row["created_at"]})
        if len(batch) == 5000 or i == turns - 1:
            db.session.execute(insert(Conversation), conversations[written:])
            written = len(conversations)
            db.session.execute(insert(Turn), batch)
            batch = []
    rows = []
    for i in range(memories):
        whom = owner(i, memories, many, few, rest)
        content = memory_text(rng, i)
        words.update(w.strip(".;").lower() for w in content.split()
                     if w.strip(".;").isalpha() and w.lower() not in STOPWORDS)
        rows.append({"tenant_id": tenant.id, "subject_id": whom, "memorable_type": "account",
                     "memorable_id": whom, "source": "distilled", "content": content})
        if len(rows) == 5000 or i == memories - 1:
            db.session.execute(insert(Memory), rows)
            rows = []
    db.session.commit()
    if db.engine.dialect.name == "postgresql":  # as autovacuum would, before a shop is searched
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("ANALYZE")
    return {"users": {MANY: many, FEW: few}, "common": [w for w, _ in words.most_common(10)],
            "questions": questions_of(corpus_index)}


def questions_of(corpora: int) -> list[str]:
    return [q.text for i in range(min(corpora, 3)) for q in build_user(i).questions]


def fingerprint(scope: SessionScope, user, asks: list[str], pool: int, config) -> tuple[str, str]:
    """Digests of every question's results, (memories, turns): the keyword scores of the whole
    candidate pool, to the bit (repr), and the ten rows each search ranks first with their why."""
    form, condition, values = scope.bound()
    key = (scope.tenant_id, scope.subject_id, tuple(sorted(scope.orders.values())))
    memories, turns = hashlib.sha256(), hashlib.sha256()
    for q in asks:
        scores, _ = memory_matches(condition, q, pool, key, values, form,
                                   branches_bound(*scope.shape))
        found, _ = search(scope, q, config, limit=10)
        memories.update(repr((q, sorted(scores.items()),
                              [(m.id, why) for m, why in found])).encode())
        scores, _ = turn_matches(user, q, pool)
        found, _ = search_turns(user, q, config, limit=10)
        turns.update(repr((q, sorted(scores.items()),
                           [(t["conversation_id"], t["turn"], t["why"]) for t in found])).encode())
    return memories.hexdigest()[:16], turns.hexdigest()[:16]


def timed(call, asks: list[str], repeats: int) -> list[float]:
    for q in asks[:5]:
        call(q)
    times = []
    for i in range(repeats):
        started = time.perf_counter()
        call(asks[i % len(asks)])
        times.append((time.perf_counter() - started) * 1000)
    return times


def raw_turns(user, pool: int):
    """The customer's newest `pool` turns with their text, read the way the app reads them by
    index (history.newest_turns, then the rows by id): the floor for conversation search."""
    def read(_):
        ids = [row[0] for row in newest_turns(user, pool)]
        db.session.execute(select(Turn.id, Turn.question, Turn.answer)
                           .where(Turn.id.in_(ids))).fetchall()
    return read


def raw_memories(scope: SessionScope, pool: int):
    """The customer's newest `pool` memories in scope, by index: the floor for memory search."""
    return lambda _: [memory.content for memory in newest(scope, pool)]


def line(name: str, times: list[float], floor: float) -> str:
    median, p95 = statistics.median(times), float(np.percentile(times, 95))
    return (f"  {name:<32} median {median:7.2f} ms  p95 {p95:7.2f} ms  "
            f"({p95 / floor:5.1f}x raw read)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--customers", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--busy-every", type=int, default=20, help="every how many turns are "
                        "the busy customer's (4 with --turns 200000: a busy customer's 50,000 "
                        "turns in a smaller shop)")
    parser.add_argument("--database", help="an empty database's URL (default: SQLite, temporary)")
    parser.add_argument("--reuse", action="store_true",
                        help="search the shop an earlier run built in --database")
    parser.add_argument("--shop-file", help="where the shop's customers and common words are "
                        "kept for --reuse (default: shop.json beside a SQLite file, or "
                        "shop-<database>.json in the working directory)")
    parser.add_argument("--fingerprints", action="store_true",
                        help="print a digest of every question's results per customer and kind")
    parser.add_argument("--build-only", action="store_true", help="build the shop and stop")
    args = parser.parse_args()
    url = args.database or f"sqlite:///{tempfile.mkdtemp(prefix='nimbus-shop-')}/shop.db"
    saved = args.shop_file or (os.path.join(os.path.dirname(url.split("///", 1)[1]), "shop.json")
                               if url.startswith("sqlite:///") else
                               f"shop-{url.rsplit('/', 1)[-1]}.json")
    app = create_app({"TESTING": True, "DATABASE_URL": url})
    config = {**app.config, "NIMBUS_MEMORY_SEARCH": False}
    pool = max(config["NIMBUS_MEMORY_CANDIDATE_POOL"], 1)
    with app.app_context():
        if args.reuse:
            started = time.perf_counter()
            create_schema()  # a shop built before a migration gains it, as `init-db` would
            with open(saved) as f:
                shop = json.load(f)
            print(f"{db.engine.dialect.name}: the shop built earlier: {shop['size']} (migrations "
                  f"to apply took {time.perf_counter() - started:.1f} s)")
        else:
            create_schema()
            started = time.perf_counter()
            shop = build_shop(args.turns, args.memories, args.customers, args.busy_every)
            shop["size"] = (f"{args.customers} customers, {args.turns} turns, "
                            f"{args.memories} memories")
            print(f"{db.engine.dialect.name}: {shop['size']}, built in "
                  f"{time.perf_counter() - started:.0f} s")
            with open(saved, "w") as f:
                json.dump(shop, f)
        print(f"the shop's ten most common words: {', '.join(shop['common'])}")
        if args.build_only:
            return
        for name, uid in shop["users"].items():
            user = db.session.get(User, uid)
            scope = SessionScope.for_user(user)
            if args.fingerprints:
                print(f"customer with {name} rows: fingerprints (memories, turns): " + ", ".join(
                    f"{kind} {fingerprint(scope, user, asks, pool, config)}" for kind, asks in
                    (("corpus questions", shop["questions"]), ("common words", shop["common"]))))
            turns = statistics.median(timed(raw_turns(user, pool), ["-"], args.repeats))
            memories = statistics.median(timed(raw_memories(scope, pool), ["-"], args.repeats))
            print(f"customer with {name} rows (raw indexed read of {pool}: turns median "
                  f"{turns:.2f} ms, memories {memories:.2f} ms):")
            for kind, asks in (("corpus questions", shop["questions"]),
                               ("common words", shop["common"])):
                print(line(f"memory search, {kind}", timed(
                    lambda q: search(scope, q, config, limit=10), asks, args.repeats), memories))
                print(line(f"turn search, {kind}", timed(
                    lambda q: search_turns(user, q, config, limit=10), asks, args.repeats), turns))
            print(line("prompt block", timed(lambda q: for_prompt(scope, config), ["-"],
                                             args.repeats), memories))


if __name__ == "__main__":
    main()
