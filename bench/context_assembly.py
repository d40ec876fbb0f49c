"""Benchmark: context assembly cost against conversation length, ours vs a naive load-everything.

Builds conversations of 10, 100, 1,000 and 10,000 turns (about a third with tool calls) in a
temporary SQLite database, then times the app's own assembly (newest-first, stops at the budget)
against a naive baseline that loads every message and trims in memory, in the same run, taking
the median of repeated calls. Run: .venv/bin/python bench/context_assembly.py
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy import insert, select  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm.messages import (assistant_message, compact_turn, final_answer,  # noqa: E402
                                 split_into_turns, tool_message, user_message)
from webapp.llm.tokens import estimate_messages  # noqa: E402
from webapp.memory.context import Policy, assemble  # noqa: E402
from webapp.models import Turn  # noqa: E402
from webapp.storage import create_conversation  # noqa: E402

SIZES = [10, 100, 1_000, 10_000]
REPEATS = 41


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


def build(user, turns: int):
    conversation = create_conversation(user, f"{turns} turns")
    rows, history = [], 0
    for seq in range(turns):
        messages = scripted_turn(seq)
        compact = compact_turn(messages)
        rows.append(dict(conversation_id=conversation.id, seq=seq, messages=messages,
                         compact=compact, question=messages[0]["content"],
                         answer=final_answer(messages), full_tokens=estimate_messages(messages),
                         compact_tokens=estimate_messages(compact), outcome="answered",
                         trace=[{"kind": "memory", "step": 0, "line": "memory: …"}]))
        history += rows[-1]["full_tokens"]
    for start in range(0, len(rows), 2000):
        db.session.execute(insert(Turn), rows[start:start + 2000])
    conversation.turn_count, conversation.history_tokens = turns, history
    db.session.commit()
    return conversation


def naive_context(conversation, policy: Policy) -> list[dict]:
    """The seed's approach: load every message, split into turns, compact, drop oldest over budget."""
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
    return [m for t in turns[start:] for m in t]


def median_ms(func) -> float:
    timings = []
    for _ in range(REPEATS):
        # Turns are read with Core selects, so every call reads them from the database; the
        # conversation, its user and tenant stay loaded, as they are during a request.
        started = time.perf_counter()
        func()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp}/bench.db"})
        with app.app_context():
            create_schema()
            seed_demo("demo")
            user = find_user("alex@example.com")
            policy = Policy.for_conversation(create_conversation(user), app.config)
            print(f"budget {policy.budget} tokens, {policy.recent_turns} recent turns in full, "
                  f"median of {REPEATS} calls\n")
            print(f"{'turns':>7} {'ours ms':>9} {'naive ms':>9} {'speed-up':>9} {'sent msgs':>10}")
            results = {}
            for turns in SIZES:
                conversation = build(user, turns)
                ours_messages = assemble(conversation, app.config, policy).section("history").messages
                naive_messages = naive_context(conversation, policy)
                assert ours_messages == naive_messages, "ours and naive must send the same history"
                ours = median_ms(lambda: assemble(conversation, app.config, policy))
                naive = median_ms(lambda: naive_context(conversation, policy))
                results[turns] = (ours, naive)
                print(f"{turns:>7} {ours:>9.2f} {naive:>9.2f} {naive / ours:>8.1f}x "
                      f"{len(ours_messages):>10}")
            ours, naive = results[SIZES[-1]]
            growth = ours / results[SIZES[0]][0]
            print(f"\ncontext assembly @{SIZES[-1]} turns: ours {ours:.2f} ms, naive {naive:.2f} ms, "
                  f"speed-up {naive / ours:.0f}x, growth {SIZES[0]}->{SIZES[-1]} {growth:.2f}x")


if __name__ == "__main__":
    main()
