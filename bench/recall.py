"""Benchmark: does conversation search find old evidence? Keyword, hybrid and default ranking.

A corpus the project generates itself (bench/recall_corpus.py: 10 users x 20 sessions x 15
turns of everyday conversation with planted facts, no download) is imported into a fresh SQLite
database, every turn is embedded in batches, and each question is searched among its user's own
turns with the app's conversation search (the `search_history` tool, `flask search`, the sidebar)
in three modes: keyword (NIMBUS_MEMORY_SEARCH off), hybrid (on) and default (the configuration's
defaults). A question counts as found at k when all its evidence turns are in the top k.
Unanswerable questions have no evidence: for them the figure is how often nothing was returned.
Hybrid weights were tuned on users 0-4 (bench/recall.py --tune); the held-out line is users 5-9.
Run: .venv/bin/python bench/recall.py [--quick] [--tune]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.recall_corpus import build  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import get_or_create_tenant, get_or_create_user  # noqa: E402
from webapp.config import DEFAULTS  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm.messages import assistant_message, user_message  # noqa: E402
from webapp.memory.longterm.history import search_turns, store_turn_vectors  # noqa: E402
from webapp.models import Turn  # noqa: E402
from webapp.transfer import FORMAT, VERSION, import_conversation  # noqa: E402

KINDS = ["synonym", "tense", "indirect", "two-session", "date", "unanswerable"]
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
            conversation = import_conversation({
                "format": FORMAT, "version": VERSION, "title": session[0]["question"][:60],
                "turns": [{"messages": [user_message(t["question"]),
                                        assistant_message(t["answer"])],
                           "created_at": t["created_at"].isoformat()} for t in session]}, user)
            sessions[conversation.id] = s
            for turn in conversation.turns:
                turn_ids[(person.index, s, turn.seq)] = turn.id
    return users, turn_ids, sessions


def embed_all(config) -> float:
    started = time.perf_counter()
    turns = db.session.scalars(db.select(Turn).order_by(Turn.id)).all()
    for start in range(0, len(turns), 256):
        store_turn_vectors(turns[start:start + 256], config)
    return time.perf_counter() - started


def evaluate(corpus, loaded, config, users_only=None) -> tuple[dict, list[float]]:
    """{kind: [(found@5, found@10)]} and the latency of every search, in ms."""
    users, turn_ids, sessions = loaded
    found, times = defaultdict(list), []
    for person in corpus:
        if users_only is not None and person.index not in users_only:
            continue
        for question in person.questions:
            started = time.perf_counter()
            results, _ = search_turns(users[person.index], question.text, config, limit=10)
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


def recall_at_10(found) -> float:
    pairs = [p for kind, ps in found.items() if kind != "unanswerable" for p in ps]
    return percent(pairs, 1)


def modes(app_config) -> dict:
    memory_defaults = {k: v for k, v in DEFAULTS.items() if k.startswith("NIMBUS_MEMORY")}
    return {"keyword": {**app_config, "NIMBUS_MEMORY_SEARCH": False},
            "hybrid": {**app_config, "NIMBUS_MEMORY_SEARCH": True},
            "default": {**app_config, **memory_defaults}}


def tune(corpus, loaded, hybrid: dict) -> None:
    """The grid the defaults were chosen from, on the tuning users only."""
    users = [p.index for p in corpus if p.index in TUNING_USERS]
    print(f"tuning on users {users[0]}-{users[-1]}: recall @10 (top 5) of answerable questions")
    for pool in (200, 600, 1000):
        for floor in (0.2,):
            cells = []
            for weight in (0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0):
                found, _ = evaluate(corpus, loaded, {
                    **hybrid, "NIMBUS_MEMORY_CANDIDATE_POOL": pool,
                    "NIMBUS_MEMORY_MIN_SIMILARITY": floor,
                    "NIMBUS_MEMORY_KEYWORD_WEIGHT": weight}, users_only=users)
                pairs = [p for k, ps in found.items() if k != "unanswerable" for p in ps]
                cells.append(f"{weight:.1f}: {percent(pairs, 1):.1f} ({percent(pairs, 0):.1f})")
            print(f"  pool {pool}, floor {floor}: " + " | ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 users instead of 10")
    parser.add_argument("--tune", action="store_true",
                        help="grid-search the hybrid weights on the tuning users, then stop")
    args = parser.parse_args()
    corpus = build(3 if args.quick else 10)
    folder = tempfile.mkdtemp(prefix="nimbus-recall-")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/bench.db"})
    with app.app_context():
        create_schema()
        started = time.perf_counter()
        loaded = load(corpus)
        users, turn_ids, _ = loaded
        questions = sum(len(p.questions) for p in corpus)
        print(f"corpus: {len(corpus)} users, {len(turn_ids)} turns, {questions} questions "
              f"(imported in {time.perf_counter() - started:.1f} s)")
        seconds = embed_all({**app.config, "NIMBUS_MEMORY_SEARCH": True})
        print(f"embedded {len(turn_ids)} turns in {seconds:.1f} s")
        if args.tune:
            return tune(corpus, loaded, modes(app.config)["hybrid"])
        summary = {}
        for mode, config in modes(app.config).items():
            search_turns(next(iter(users.values())), "warm up", config)
            found, times = evaluate(corpus, loaded, config)
            summary[mode] = recall_at_10(found), float(np.percentile(times, 95))
            print(f"\n{mode}: found in top 5 / top 10 (unanswerable: nothing returned)")
            for kind in KINDS:
                pairs = found.get(kind, [])
                print(f"  {kind:<13} {percent(pairs, 0):5.1f} % / {percent(pairs, 1):5.1f} %"
                      f"   ({len(pairs)} questions)")
            print(f"  answerable    @10 {summary[mode][0]:.1f} %; latency median "
                  f"{statistics.median(times):.1f} ms, p95 {summary[mode][1]:.1f} ms")
            held_out = [p.index for p in corpus if p.index not in TUNING_USERS]
            if held_out:
                found, _ = evaluate(corpus, loaded, config, users_only=held_out)
                print(f"  held-out users {held_out[0]}-{held_out[-1]} (not used for tuning): "
                      f"@10 {recall_at_10(found):.1f} %")
        print(f"\nrecall @10: keyword {summary['keyword'][0]:.1f} %, hybrid "
              f"{summary['hybrid'][0]:.1f} %, default {summary['default'][0]:.1f} %; "
              f"p95 {summary['default'][1]:.1f} ms")


if __name__ == "__main__":
    main()
