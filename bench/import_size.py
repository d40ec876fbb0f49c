"""Memory and speed of the import job's reading and writing, by file: a 4 MB OpenAI JSONL file
(41,000 one-turn conversations), a 60 MB ChatGPT export of one long conversation and one of
many conversations, on SQLite.

Each import runs in a fresh process (so its peak RSS, ru_maxrss, is its own), twice: streamed,
as the import job reads (batch.import_files given the path), and whole, as before (the file read
into memory, every conversation parsed and checked, then stored: read_files + import_each, which
`flask import` still uses). Prints turns/s, peak RSS, and the longest write transaction (from
its first write to its commit: while it lasts, every chat's write waits), p95 and longest.

    python bench/import_size.py [--small]
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))


def write_many_chatgpt(path: str, megabytes: float, rng) -> None:
    """ChatGPT's conversations.json with conversations of 2 to 40 turns until `megabytes`."""
    from import_under_load import chatgpt_node, WORDS
    with open(path, "w") as out:
        out.write("[")
        number = 0
        while out.tell() < megabytes * 1e6:
            mapping, parent = {"root": chatgpt_node("root", None, "u0", None, "", None)}, "root"
            turns = rng.randint(2, 40)
            for t in range(turns):
                q, a = f"u{t}", f"a{t}"
                mapping[q] = chatgpt_node(q, parent, a, "user", " ".join(rng.choices(WORDS, k=12)),
                                          1.7e9 + t * 60)
                mapping[a] = chatgpt_node(a, q, f"u{t + 1}" if t + 1 < turns else None,
                                          "assistant", " ".join(rng.choices(WORDS, k=40)),
                                          1.7e9 + t * 60 + 5)
                parent = a
            out.write(("," if number else "") + json.dumps(
                {"title": f"Chat {number}", "create_time": 1.7e9, "mapping": mapping,
                 "current_node": parent, "id": f"conv-{number}"}))
            number += 1
        out.write("]")


def run_one(path: str, how: str) -> None:
    """In this process: import `path` one way, print a JSON line of figures."""
    from sqlalchemy import event
    from webapp import create_app
    from webapp.accounts import find_user, seed_demo
    from webapp.database import create_schema
    from webapp.extensions import db
    from webapp.transfer import batch
    folder = tempfile.mkdtemp(prefix="nimbus-import-size-")
    app = create_app({"TESTING": True, "SECRET_KEY": "bench", "NIMBUS_MEMORY_SEARCH": False,
                      "DATABASE_URL": f"sqlite:///{folder}/nimbus.db"})
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        user = find_user(app.config["NIMBUS_DEMO_USER"])
        writing, spans = [None], []

        @event.listens_for(db.engine, "before_cursor_execute")
        def first_write(conn, cursor, statement, *args):
            if writing[0] is None and statement.lstrip().upper().startswith(
                    ("INSERT", "UPDATE", "DELETE")):
                writing[0] = time.perf_counter()

        @event.listens_for(db.engine, "commit")
        def committed(conn):
            if writing[0] is not None:
                spans.append(time.perf_counter() - writing[0])
            writing[0] = None
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        if how == "streamed":
            result = batch.import_files([("upload", path)], user)
        else:
            with open(path, "rb") as file:
                checked, _ = batch.read_files([("upload", file.read())])
            result = batch.import_each(checked, user)
        seconds = time.perf_counter() - started
        print(json.dumps({"turns": result.turns, "conversations": len(result.conversations),
                          "seconds": seconds, "before_mb": before / 1024,
                          "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                          "longest_ms": max(spans) * 1000, "commits": len(spans),
                          "p95_ms": sorted(spans)[int(0.95 * len(spans))] * 1000}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="a tenth of each size")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # PATH HOW: a child's run
    args = parser.parse_args()
    if args.one:
        return run_one(*args.one)
    from import_under_load import write_chatgpt_export, write_jsonl
    rng, scale = random.Random(7), 0.1 if args.small else 1.0
    folder = tempfile.mkdtemp(prefix="nimbus-import-size-")
    files = {"JSONL": os.path.join(folder, "chat.jsonl"),
             "ChatGPT, 1 conversation": os.path.join(folder, "one.json"),
             "ChatGPT, many conversations": os.path.join(folder, "many.json")}
    write_jsonl(files["JSONL"], 4 * scale, rng)
    write_chatgpt_export(files["ChatGPT, 1 conversation"], 60 * scale, rng)
    write_many_chatgpt(files["ChatGPT, many conversations"], 60 * scale, rng)
    print(f"bench/import_size.py: SQLite, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for name, path in files.items():
        for how in ("whole", "streamed"):
            out = subprocess.run([sys.executable, __file__, "--one", path, how], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout
            got = json.loads(out.strip().splitlines()[-1])
            print(f"  {name} ({os.path.getsize(path) / 1e6:.0f} MB), {how:8}: "
                  f"{got['conversations']:,} conversations, {got['turns']:,} turns in "
                  f"{got['seconds']:.1f} s ({got['turns'] / got['seconds']:,.0f} turns/s); peak RSS "
                  f"{got['peak_mb']:.0f} MB ({got['peak_mb'] - got['before_mb']:+.0f} MB); "
                  f"write transactions p95 {got['p95_ms']:.0f} ms, longest "
                  f"{got['longest_ms']:.0f} ms of {got['commits']:,}")


if __name__ == "__main__":
    main()
