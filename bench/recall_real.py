"""Benchmark: does conversation search rank keyword, similarity and hybrid on real multi-session
chats as bench/recall.py does on its generated corpus?

LoCoMo (bench/locomo.py: 10 people, 272 dated sessions, about 2,000 questions with evidence
lines; not shipped, its path is the argument) is imported into a fresh SQLite database, one
person per conversation, as `flask import` would; its turns get their vectors as the import's
embedding job gives them (embed_turns_in_batches); then every question with evidence is searched
among its person's turns with the app's conversation search (search_turns, as `flask search`)
in the modes of bench/recall.py: keyword (NIMBUS_MEMORY_SEARCH off), similarity (MiniLM alone,
exact, over all the person's turns), hybrid (on, score fusion), rank fusion (on, the reciprocal-
rank fusion before) and default (the configuration's defaults).
Printed per LoCoMo category and overall, at top 5 and 10: the share of a question's evidence
turns found (mean over questions) and how often all of them were. --leads measures what other
turn vectors and fusions would give (bench/recall_real_leads.py).
Run: .venv/bin/python bench/recall_real.py PATH/TO/locomo10.json [--quick] [--leads]
"""
import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.locomo import CATEGORIES, import_file, load as load_corpus  # noqa: E402
from bench.recall import cache_vectors, modes, order, vector_search  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import get_or_create_tenant, get_or_create_user  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.memories.search.conversations import embed_turns_in_batches, search_turns  # noqa: E402
from webapp.transfer import import_conversation  # noqa: E402

MEASURES = ["evidence @5", "evidence @10", "all evidence @5", "all evidence @10"]


def store(samples) -> tuple[dict, dict, dict]:
    """Import every session as a conversation: users by sample id, the turn id of every
    (sample id, session, turn index), and the turn id of every (conversation id, seq)."""
    tenant = get_or_create_tenant("recall-real", "Recall Real")
    users, turn_ids, by_place = {}, {}, {}
    for n, sample in enumerate(samples):
        user = get_or_create_user(tenant, f"person{n}@bench.invalid", " & ".join(sample.speakers))
        db.session.commit()
        users[sample.id] = user
        for s, session in enumerate(sample.sessions):
            conversation = import_conversation(import_file(session), user)
            for t, turn in enumerate(sorted(conversation.turns, key=lambda turn: turn.seq)):
                turn_ids[(sample.id, s, t)] = turn.id
                by_place[(conversation.id, turn.seq)] = turn.id
    return users, turn_ids, by_place


def embed(samples, loaded, config, cache: bool) -> tuple[int, float]:
    """Every turn's vector through the import job's path; (turns, seconds) of the first person's,
    timed without the vector cache, for a throughput that means something."""
    _, turn_ids, _ = loaded
    first = [i for (sid, _, _), i in turn_ids.items() if sid == samples[0].id]
    started = time.perf_counter()
    sum(done for _, done in embed_turns_in_batches(first, config))
    seconds = time.perf_counter() - started
    if cache:
        cache_vectors()
    rest = [i for (sid, _, _), i in turn_ids.items() if sid != samples[0].id]
    sum(done for _, done in embed_turns_in_batches(rest, config))
    return len(first), seconds


def evaluate(samples, loaded, config, search=search_turns) -> tuple[dict, list[float]]:
    """{category: [(share @5, share @10, all @5, all @10)]} and every search's latency in ms."""
    users, turn_ids, by_place = loaded
    found, times = defaultdict(list), []
    for sample in samples:
        place = sample.turn_of()
        for question in sample.questions:
            wanted = {turn_ids[(sample.id, *place[d])] for d in question.evidence if d in place}
            if not wanted:
                continue
            started = time.perf_counter()
            results, _ = search(users[sample.id], question.text, config, limit=10)
            times.append((time.perf_counter() - started) * 1000)
            got = [by_place[(r["conversation_id"], r["turn"])] for r in results
                   if not r.get("inactive_branch")]
            shares = [len(wanted & set(got[:k])) / len(wanted) for k in (5, 10)]
            found[question.category].append((*shares, *(share == 1 for share in shares)))
    return found, times


def percent(rows, measure: int) -> float:
    return 100 * sum(row[measure] for row in rows) / max(len(rows), 1)


def table(results: dict, measure: int) -> None:
    """Categories down, modes across, and which mode wins each category."""
    names = list(results)
    width = max(12, *(len(m) + 2 for m in names))
    print(f"{'category':<13}" + "".join(f"{m:>{width}}" for m in names) + "   questions  best")
    first = results[names[0]][0]
    for category in [*sorted(first), "all"]:
        cells = {m: percent(results[m][0][category] if category != "all" else
                            [r for rows in results[m][0].values() for r in rows], measure)
                 for m in names}
        count = len(first[category]) if category != "all" else sum(map(len, first.values()))
        best = ", ".join(m for m in names if cells[m] == max(cells.values()))
        label = CATEGORIES.get(category, str(category))
        print(f"{label:<13}" + "".join(f"{cells[m]:>{width - 1}.1f}%" for m in names)
              + f"   {count:>9}  {best}")


def report(results: dict) -> None:
    for measure in (1, 0, 3, 2):
        print(f"\n{MEASURES[measure]}" + (" (share of a question's evidence turns found)"
                                          if measure < 2 else " (every evidence turn found)"))
        table(results, measure)
    for measure in (1, 0, 3, 2):
        print(f"order, {MEASURES[measure]}: " + order(
            {m: percent([r for rows in found.values() for r in rows], measure)
             for m, (found, _) in results.items() if m in ("keyword", "similarity", "hybrid")}))


def sizes(path: str) -> str:
    """The database's size and what its turn vectors and keyword index take of it."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the file's size is then all of it
        vectors = connection.execute(
            "SELECT SUM(LENGTH(embedding)) FROM turn_vectors").fetchone()[0] or 0
        pages = dict(connection.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
        keywords = f"{sum(v for k, v in pages.items() if k.startswith('turns_fts')) / 1e6:.1f} MB"
    except sqlite3.OperationalError:  # a SQLite built without dbstat
        keywords = "unknown (no dbstat)"
    finally:
        connection.close()
    return (f"database {os.path.getsize(path) / 1e6:.1f} MB: turn vectors {vectors / 1e6:.1f} MB "
            f"of bytes, keyword index (turns_fts*) {keywords}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="locomo10.json, locomo10.zip or a folder of its files")
    parser.add_argument("--quick", action="store_true", help="3 conversations instead of 10")
    parser.add_argument("--leads", action="store_true",
                        help="also sentence vectors and score-aware fusion (recall_real_leads.py)")
    parser.add_argument("--no-cache", action="store_true", help="embed every text afresh")
    args = parser.parse_args()
    samples = load_corpus(args.path)[:3 if args.quick else None]
    folder = tempfile.mkdtemp(prefix="nimbus-recall-real-")
    database = os.path.join(folder, "bench.db")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{database}"})
    with app.app_context():
        create_schema()
        started = time.perf_counter()
        loaded = store(samples)
        turns = len(loaded[1])
        words = statistics.mean(len(f"{t.question} {t.answer}".split())
                                for s in samples for session in s.sessions for t in session)
        asked = sum(len(s.questions) for s in samples)
        print(f"corpus: {len(samples)} people, {sum(len(s.sessions) for s in samples)} sessions, "
              f"{turns} turns ({words:.0f} words each on average), {asked} questions "
              f"(imported in {time.perf_counter() - started:.1f} s)")
        config = modes(app.config)
        timed, seconds = embed(samples, loaded, config["hybrid"], not args.no_cache)
        print(f"embedding: {timed} turns in {seconds:.1f} s = {timed / seconds:.1f} turns/s "
              f"(one person's, uncached, {os.cpu_count()} cores)")
        print(sizes(database))
        results = {}
        for mode, mode_config in config.items():
            search = vector_search(mode_config) if mode == "similarity" else search_turns
            search(next(iter(loaded[0].values())), "warm up", mode_config, 10)
            results[mode] = evaluate(samples, loaded, mode_config, search)
        if args.leads:
            from bench.recall_real_leads import leads
            results.update(leads(samples, loaded, config["hybrid"], evaluate))
        print(f"questions with evidence searched: {len(results['keyword'][1])} of {asked}")
        report(results)
        print("\nlatency: " + ", ".join(
            f"{m} median {statistics.median(t):.1f} ms p95 {np.percentile(t, 95):.1f} ms"
            for m, (_, t) in results.items()))


if __name__ == "__main__":
    main()
