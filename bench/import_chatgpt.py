"""Import speed of a large ChatGPT export: `flask import conversations.json` end to end.

Writes a ChatGPT conversations.json (the shape of tests/data/chatgpt/conversations.json) with
--turns turns spread over --conversations conversations, each answer --words long, every tenth
turn a Python tool call with its output and every fifth conversation an edited (abandoned)
branch, then runs the import command on a fresh SQLite database, as a user would. Prints the
file's size and the time of each phase; the figure is turns imported per second and the total
against the 10 s the issue allows. With --broken P, P % of the conversations are records real
exports hold that cannot be read (no mapping, an empty mapping, a root alone): the command
imports the rest, one transaction each, and names each one skipped.

    python bench/import_chatgpt.py [--turns 10000] [--conversations 100] [--words 300] [--broken 1]
"""
import argparse
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.models import Turn  # noqa: E402
from webapp.transfer import import_all, load, parse  # noqa: E402
from webapp.transfer.batch import import_each  # noqa: E402

WORDS = ("order refund parcel shipping days window policy customer ticket help address "
         "delivery late return label receipt bakery flour starter oven recipe").split()


def node(node_id, parent, role, text, when, recipient="all", kind="text", name=None):
    content = {"content_type": kind, "parts": [text]} if kind == "text" else \
        {"content_type": kind, "text": text, **({"language": "python"} if kind == "code" else {})}
    return {"id": node_id, "parent": parent, "children": [], "message": {
        "id": node_id, "author": {"role": role, "name": name, "metadata": {}},
        "create_time": when, "content": content, "status": "finished_successfully",
        "metadata": {}, "recipient": recipient, "weight": 1.0}}


def conversation(number: int, turns: int, words: int, rng) -> dict:
    start = 1.7e9 + number * 86_400
    mapping = {"root": {"id": "root", "parent": None, "children": [], "message": None}}
    parent, when = "root", start

    def add(n):
        nonlocal parent
        mapping[parent]["children"].append(n["id"])
        mapping[n["id"]] = n
        parent = n["id"]
    for t in range(turns):
        when += 60
        if t == 1 and number % 5 == 0:  # an edited question: a branch that is not imported
            abandoned = node(f"c{number}x", parent, "user", "never mind", when)
            mapping[parent]["children"].append(abandoned["id"])
            mapping[abandoned["id"]] = abandoned
        add(node(f"c{number}u{t}", parent, "user", f"Question {t}: " + " ".join(
            rng.choices(WORDS, k=words // 10)) + "?", when))
        if t % 10 == 9:
            add(node(f"c{number}k{t}", parent, "assistant", "print(14 - 9)", when + 1,
                     recipient="python", kind="code"))
            add(node(f"c{number}o{t}", parent, "tool", "5", when + 2, kind="execution_output",
                     name="python"))
        add(node(f"c{number}a{t}", parent, "assistant", " ".join(rng.choices(WORDS, k=words)),
                 when + 3))
    return {"title": f"Conversation {number}", "create_time": start, "update_time": when,
            "mapping": mapping, "current_node": parent, "id": f"conv-{number}"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--allowed", type=float, default=10.0,
                        help="seconds the import may take (the issue: 10 s for 10,000 turns, "
                             "60 s for 10,000 conversations with 1 %% broken)")
    parser.add_argument("--broken", type=float, default=0.0,
                        help="percent of conversations that cannot be read")
    args = parser.parse_args()
    rng = random.Random(7)
    folder = tempfile.mkdtemp(prefix="nimbus-import-bench-")
    path = os.path.join(folder, "conversations.json")
    per = args.turns // args.conversations
    records = [conversation(n, per, args.words, rng) for n in range(args.conversations)]
    every = round(100 / args.broken) if args.broken else 0
    broken = list(range(every - 1, len(records), every)) if every else []
    for k, n in enumerate(broken):  # the three kinds of unreadable record real exports hold
        kind = k % 3
        if kind == 0:
            del records[n]["mapping"]
        elif kind == 1:
            records[n]["mapping"] = {}
        else:  # a chat opened and left: its tree holds the root alone
            records[n]["mapping"] = {"root": {"id": "root", "message": None, "parent": None,
                                              "children": []}}
            records[n]["current_node"] = "root"
    with open(path, "w") as handle:
        json.dump(records, handle)
    size = os.path.getsize(path)
    app = create_app({"TESTING": True, "SECRET_KEY": "bench", "NIMBUS_MEMORY_SEARCH": False,
                      "DATABASE_URL": f"sqlite:///{folder}/nimbus.db"})
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        user = find_user(app.config["NIMBUS_DEMO_USER"])
        started, cpu = time.perf_counter(), time.process_time()
        with open(path, "rb") as handle:
            data = load(handle.read())
        loaded = time.perf_counter()
        skipped: list[str] = []
        checked = parse(data, skipped=skipped if broken else None)
        parsed = time.perf_counter()
        if broken:  # one transaction per conversation, as `flask import` does
            import_each(checked, user)
        else:
            import_all(checked, user)
        done, cpu = time.perf_counter(), time.process_time() - cpu
        assert len(skipped) == len(broken), (len(skipped), len(broken))
        stored = db.session.query(Turn).count()
        # The command itself, with its progress bar, on a second copy of the data.
        runner = app.test_cli_runner()
        cli_started = time.perf_counter()
        # Into another customer's account: the demo user's retry would skip every conversation.
        result = runner.invoke(args=["import", path, "--user", "bench-cli@example.com"])
        cli_seconds = time.perf_counter() - cli_started
        assert result.exit_code == 0, result.output
        summary = next(line for line in result.stdout.splitlines() if line.startswith("Imported"))
    total = done - started
    print(f"bench/import_chatgpt.py: {args.conversations} conversations, {stored:,} turns, "
          f"{size / 1e6:.1f} MB, {os.cpu_count()} CPUs")
    print(f"  read + check values  {loaded - started:6.2f} s")
    print(f"  parse + validate     {parsed - loaded:6.2f} s")
    print(f"  write ({'a commit per 200' if broken else 'one commit'}){done - parsed:6.2f} s")
    if broken:
        print(f"  {len(broken)} unreadable records skipped, each named; the command said: {summary}")
    print(f"import of {stored:,} ChatGPT turns: {total:.2f} s ({stored / total:,.0f} turns/s, "
          f"{total / args.allowed:.0%} of the {args.allowed:g} s allowed; {cpu:.2f} s of CPU); "
          "`flask import` with its progress bar: "
          f"{cli_seconds:.2f} s")


if __name__ == "__main__":
    main()
