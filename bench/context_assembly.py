"""Benchmark: context assembly per request against conversation length: ours, the floor, naive.

Builds conversations of 10, 100, 1,000 and 10,000 turns (about a third with tool calls) in a
temporary SQLite database. Every timed call is a request: a fresh session, so the conversation,
its tenant and its user are loaded from the database each time, the same for ours and naive.
  ours:  the app's own assemble() (newest-first, stops at the budget), memory and summary included;
  floor: the raw indexed tail query that returns the very turns ours sends (Core select of their
         sent form, decoded), nothing else: what no implementation can skip;
  naive: the seed's approach: load every message, split into turns, compact, trim in memory.
GC is handled the same way for all three: gc.collect() before each side's section of 5 calls and
GC disabled during it, so no call pays for collecting another's garbage or for scanning the data
built before it (with GC on, naive's cost at 10,000 turns depends on the heap, not on its work).
Sections of the sides alternate, round after round, and the median of each side is printed. Run: .venv/bin/python bench/context_assembly.py [--repeats N]
"""
import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy import insert, select  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.agent.prompts import system_prompt  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm.messages import (assistant_message, compact_turn, final_answer,  # noqa: E402
                                 split_into_turns, tool_message, user_message)
from webapp.llm.tokens import estimate_messages  # noqa: E402
from webapp.context.assemble import FULL, Policy, assemble  # noqa: E402
from webapp.models import Conversation, Turn  # noqa: E402
from webapp.storage import create_conversation  # noqa: E402

SIZES = [10, 100, 1_000, 10_000]


def scripted_turn(i: int) -> list[dict]:
    question = f"Question {i}: can you tell me about order #{1000 + i % 50} and the refund rules?"
    messages = [user_message(question)]
    if i % 3 == 0:  # about a third of the turns use a tool
        call = {"id": f"call_{i}", "name": "check_refund_eligibility", "arguments": {"order_id": 1000 + i}}
        messages.append(assistant_message("", [call]))
        messages.append(tool_message(call["id"], call["name"], {
            "order_id": 1000 + i, "status": "paid", "days_since_purchase": i % 30,
            "eligible": i % 30 <= 14, "reason": "Paid and within the refund window." * 2}))
    messages.append(assistant_message(f"Answer {i}: order #{1000 + i % 50} " + "is fine. " * 15))
    return messages


def build(turns: int) -> str:
    conversation = create_conversation(find_user("alex@example.com"), f"{turns} turns")
    rows, history = [], 0
    for seq in range(turns):
        messages = scripted_turn(seq)
        compact = compact_turn(messages)
        rows.append(dict(conversation_id=conversation.id, seq=seq, messages=messages,
                         compact=compact, question=messages[0]["content"],
                         answer=final_answer(messages), full_tokens=estimate_messages(messages),
                         compact_tokens=estimate_messages(compact), outcome="answered",
                         tool_calls=1 if seq % 3 == 0 else 0,
                         trace=[{"kind": "memory", "step": 0, "line": "memory: …"}]))
        history += rows[-1]["full_tokens"]
    for start in range(0, len(rows), 2000):
        db.session.execute(insert(Turn), rows[start:start + 2000])
    conversation.turn_count, conversation.history_tokens = turns, history
    db.session.commit()
    return conversation.id


def load_request(conversation_id: str) -> Conversation:
    """What a request starts with: a fresh session, then the conversation, its tenant and user."""
    db.session.remove()
    conversation = db.session.get(Conversation, conversation_id)
    conversation.tenant, conversation.user  # noqa: B018  loaded, as the views and prompt need them
    return conversation


def ours(conversation, config, tail) -> list[dict]:
    return assemble(conversation, config).messages


def naive(conversation, config, tail) -> list[dict]:
    """The seed's approach: load every message, split into turns, compact, drop oldest over budget."""
    policy = Policy.for_conversation(conversation, config)
    stored = db.session.scalars(select(Turn.messages).where(Turn.conversation_id == conversation.id)
                                .order_by(Turn.seq)).all()
    turns = split_into_turns([m for messages in stored for m in messages])
    keep_full_from = len(turns) - policy.recent_turns
    turns = [t if i >= keep_full_from else compact_turn(t) for i, t in enumerate(turns)]
    sizes = [estimate_messages(t) for t in turns]
    total, start = sum(sizes), 0
    while len(turns) - start > 1 and total > policy.budget:
        total -= sizes[start]
        start += 1
    system = [{"role": "system", "content": system_prompt(conversation)}]
    return system + [m for t in turns[start:] for m in t]


def floor(conversation, config, tail) -> list[list[dict]]:
    """The raw indexed tail query: the sent form of exactly the turns ours sends, newest first."""
    full_from, oldest = tail
    rows = db.session.connection().exec_driver_sql(
        "SELECT seq, CASE WHEN seq >= ? THEN messages ELSE compact END FROM turns "
        "WHERE conversation_id = ? AND seq >= ? ORDER BY seq DESC",
        (full_from, conversation.id, oldest)).all()
    return [json.loads(sent) for _, sent in rows]


def load(conversation, config, tail) -> None:
    """The request's own loading, common to ours and naive, timed on its own."""
    load_request(conversation.id)


SIDES = {"ours": ours, "floor": floor, "naive": naive, "load": load}


def measure(conversation_id: str, config, tail, rounds: int, calls: int) -> dict[str, float]:
    """Median ms per side; each side's calls run as sections after gc.collect(), GC off in them."""
    timings = {side: [] for side in SIDES}
    for _ in range(rounds):
        for side, work in SIDES.items():
            gc.collect()
            gc.disable()
            for _ in range(calls):
                conversation = load_request(conversation_id)  # untimed: a fresh request
                started = time.perf_counter()
                work(conversation, config, tail)
                timings[side].append((time.perf_counter() - started) * 1000)
            gc.enable()
    return {side: statistics.median(values) for side, values in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9,
                        help="Rounds per size; each times 5 calls of every side.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp}/bench.db"})
        config = app.config
        with app.app_context():
            create_schema()
            seed_demo("demo")
            print(f"budget {config['NIMBUS_HISTORY_BUDGET']} tokens, "
                  f"{config['NIMBUS_RECENT_TURNS']} recent turns in full, no memories stored, "
                  f"median of {args.rounds} rounds x 5 calls each, on {os.cpu_count()} CPUs\n")
            print(f"{'turns':>7} {'ours ms':>9} {'floor ms':>9} {'ours/floor':>11} "
                  f"{'naive ms':>9} {'speed-up':>9} {'load ms':>8} {'sent turns':>11}")
            results = {}
            for turns in SIZES:
                conversation_id = build(turns)
                plan = assemble(load_request(conversation_id), config)
                kept = plan.history.kept()
                full_from = min([f.seq for f in kept if f.fate == FULL], default=turns)
                oldest = kept[0].seq
                tail = (full_from, oldest)
                conversation = load_request(conversation_id)
                assert ours(conversation, config, tail) == naive(conversation, config, tail), \
                    "ours and naive must send the same request"
                assert [m for t in reversed(floor(conversation, config, tail)) for m in t] == \
                    plan.section("history").messages, "the floor must read the turns ours sends"
                ms = results[turns] = measure(conversation_id, config, tail, args.rounds, 5)
                print(f"{turns:>7} {ms['ours']:>9.3f} {ms['floor']:>9.3f} "
                      f"{ms['ours'] / ms['floor']:>10.1f}x {ms['naive']:>9.2f} "
                      f"{ms['naive'] / ms['ours']:>8.1f}x {ms['load']:>8.3f} {len(kept):>11}")
            db.session.remove()
            db.engine.dispose()
    last, first = results[SIZES[-1]], results[SIZES[0]]
    print("\nEvery call starts a fresh request (new session; conversation, tenant and user loaded,\n"
          "untimed, the same for all; 'load' times that loading alone). ours: assemble(); floor: "
          "the tail\nquery alone; naive: load all + trim. GC: gc.collect() before each side's 5 calls, "
          "disabled during them.")
    print(f"context assembly @{SIZES[-1]} turns: ours {last['ours']:.2f} ms, floor "
          f"{last['floor']:.2f} ms ({last['ours'] / last['floor']:.1f}x), naive "
          f"{last['naive']:.2f} ms, speed-up {last['naive'] / last['ours']:.0f}x, growth "
          f"{SIZES[0]}->{SIZES[-1]} {last['ours'] / first['ours']:.2f}x")


if __name__ == "__main__":
    main()
