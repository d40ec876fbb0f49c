"""Benchmark against another revision, for a machine too busy for absolute figures: memory search
at 10,000 memories and conversation search over 10,000 turns of one person, as in
bench/memory_search.py, timed in two processes, this tree's and REV's (from `git archive`), that
take turns (16 searches of each kind at a time), so both see the same load. Each builds its own
database with its own schema. Run: .venv/bin/python bench/memory_search_against.py REV [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PER_TURN = 16  # searches of each kind per turn of a process
CHILD = r"""
import json, os, sys, time
tree, folder = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
from webapp import create_app
from webapp.database import create_schema
from webapp.memories.search.embeddings import MiniLMEmbedder
from webapp.memories.search.conversations import search_turns
from webapp.memories.search.recall import search
from bench.memory_search import QUERIES, TURNS, build, build_turns, sentences
app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/bench.db"})
with app.app_context():
    create_schema()
    texts = sentences()
    vectors = MiniLMEmbedder().embed(texts)
    scope = build(app.config, 10_000, texts, vectors)
    user = build_turns(TURNS, texts, vectors)
    config = {**app.config, "NIMBUS_MEMORY_SEARCH": True}
    kinds = {"memories": lambda q: search(scope, q, config, limit=10),
             "turns": lambda q: search_turns(user, q, config, limit=10)}
    for call in kinds.values():
        for query in QUERIES * 2:
            call(query)
    print("ready", flush=True)
    i = 0
    for _ in sys.stdin:
        times = {}
        for kind, call in kinds.items():
            times[kind] = []
            for _ in range(PER_TURN):
                started = time.perf_counter()
                call(QUERIES[i % len(QUERIES)])
                times[kind].append((time.perf_counter() - started) * 1000)
                i += 1
        print(json.dumps(times), flush=True)
""".replace("PER_TURN", str(PER_TURN))


def export(revision: str, folder: str) -> str:
    """REV's files, as committed, in `folder`."""
    archive = os.path.join(folder, "tree.tar")
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", HERE, "archive", revision], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(os.path.join(folder, "tree"), filter="data")
    return os.path.join(folder, "tree")


def main() -> None:
    revision, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
    with tempfile.TemporaryDirectory(prefix="nimbus-against-") as folder:
        trees = {"this tree": HERE, revision: export(revision, folder)}
        children = {}
        for name, tree in trees.items():
            data = tempfile.mkdtemp(dir=folder)
            children[name] = subprocess.Popen(
                [sys.executable, "-c", CHILD, tree, data], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for name, child in children.items():
            if child.stdout.readline().strip() != "ready":
                raise SystemExit(f"{name}: the benchmark process failed to start")
        load_before = os.getloadavg()
        times = {name: {"memories": [], "turns": []} for name in children}
        for r in range(rounds):  # who goes first alternates
            for name in (list(children) if r % 2 == 0 else list(children)[::-1]):
                children[name].stdin.write("go\n")
                children[name].stdin.flush()
                for kind, found in json.loads(children[name].stdout.readline()).items():
                    times[name][kind].extend(found)
        for child in children.values():
            child.stdin.close()
            child.wait()
        load_after = os.getloadavg()
    print(f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"({os.cpu_count()} cores); {rounds * PER_TURN} searches of each kind per tree")
    for kind, label in (("memories", "memory search @10000"),
                        ("turns", "conversation search @10000 turns")):
        ours, theirs = times["this tree"][kind], times[revision][kind]
        p95, their_p95 = np.percentile(ours, 95), np.percentile(theirs, 95)
        print(f"{label}: this tree median {statistics.median(ours):.1f} ms, p95 {p95:.1f} ms | "
              f"{revision} median {statistics.median(theirs):.1f} ms, p95 {their_p95:.1f} ms | "
              f"p95 ratio {p95 / their_p95:.2f}, median ratio "
              f"{statistics.median(ours) / statistics.median(theirs):.2f}")


if __name__ == "__main__":
    main()
