"""Benchmark: server time and size of the chat page /c/<id> against conversation length.

Builds conversations of 100, 1,000 and 10,000 answered turns (a third with a tool call and its
result; sizes counted as storage counts them) for one guest in a temporary SQLite database,
without a summary and with one covering all but the newest 20 turns, then times GET /c/<id>
(median of repeated requests) against a baseline measured in the same run: the same page drawing
every turn, as the chat page did before it showed only the newest page.
Run: .venv/bin/python bench/chat_page.py
"""
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from flask import g, render_template  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import seed_demo  # noqa: E402
from webapp.chat.views import pane  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.context.summary.models import ConversationSummary  # noqa: E402
from webapp.llm.messages import assistant_message, compact_turn, tool_message, user_message  # noqa: E402
from webapp.llm.tokens import estimate_messages  # noqa: E402
from webapp.models import Conversation, Turn, User  # noqa: E402
from webapp.storage import all_turns, create_conversation  # noqa: E402

SIZES = [100, 1_000, 10_000]
REPEATS = 21


def turn_row(conversation_id: str, seq: int) -> dict:
    question = f"Question {seq}: where is my order #{1041 + seq % 5}, and can I get a refund?"
    messages = [user_message(question)]
    if seq % 3 == 0:
        call = {"id": f"call_{seq}", "name": "lookup_order", "arguments": {"order_id": 1041 + seq % 5}}
        messages += [assistant_message("", [call]),
                     tool_message(call["id"], call["name"], {"order_id": 1041 + seq % 5,
                                                             "status": "shipped", "amount": "$89.00"})]
    answer = f"Order #{1041 + seq % 5} is **shipped**. Refunds are possible within 14 days of purchase."
    messages.append(assistant_message(answer))
    compact = compact_turn(messages)
    return {"conversation_id": conversation_id, "seq": seq, "messages": messages,
            "compact": compact, "question": question, "answer": answer,
            "outcome": "answered", "trace": [], "full_tokens": estimate_messages(messages),
            "compact_tokens": estimate_messages(compact)}


def build(user: User, turns: int, summary: bool) -> str:
    conversation = create_conversation(user, f"{turns} turns")
    rows = [turn_row(conversation.id, seq) for seq in range(turns)]
    for start in range(0, turns, 1000):
        db.session.execute(insert(Turn), rows[start:start + 1000])
    conversation.turn_count = turns
    conversation.history_tokens = sum(r["full_tokens"] for r in rows)
    if summary:
        db.session.add(ConversationSummary(
            conversation_id=conversation.id, style="concise", through_seq=turns - 21,
            text="The customer asked about orders #1041-#1045; all shipped, refunds explained."))
        conversation.has_summary = True
    db.session.commit()
    return conversation.id


def median_ms(func, repeats: int) -> tuple[float, int]:
    timings, size = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        size = func()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings), size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp}/bench.db",
                          "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0})
        with app.app_context():
            create_schema()
            seed_demo("demo")
        client = app.test_client()
        page = client.get("/").text  # a browser's first visit: its guest is stored at its first write
        client.environ_base["HTTP_X_CSRFTOKEN"] = re.search(r'csrf-token" content="([^"]+)"', page).group(1)
        client.post("/messages", data={"message": ""})
        with client.session_transaction() as session:
            user_id = int(str(session["_user_id"]).partition(":")[0])  # Flask-Login's "id:token"

        def page(conversation_id):
            response = client.get(f"/c/{conversation_id}")
            assert response.status_code == 200
            return len(response.data)

        def whole_page(conversation_id):  # the baseline: every turn drawn
            with app.test_request_context(f"/c/{conversation_id}"):
                g.user = db.session.get(User, user_id)
                context = pane(db.session.get(Conversation, conversation_id))
                context["turns"], context["has_older"] = all_turns(conversation_id), False
                html = render_template("chat/_conversation.html", **context)
                db.session.remove()
                return len(html.encode())

        print(f"page of {app.config['NIMBUS_CHAT_PAGE_TURNS']} turns, median of {REPEATS} requests "
              f"(baseline: one render)\n")
        for summary in (False, True):
            print(f"{'with' if summary else 'without'} a summary")
            print(f"{'turns':>7} {'page ms':>9} {'page KB':>9} {'all ms':>9} {'all KB':>9}")
            results = {}
            for turns in SIZES:
                with app.app_context():
                    conversation_id = build(db.session.get(User, user_id), turns, summary)
                    db.session.remove()
                ms, size = median_ms(lambda: page(conversation_id), REPEATS)
                all_ms, all_size = median_ms(lambda: whole_page(conversation_id), 1)
                results[turns] = (ms, size)
                print(f"{turns:>7} {ms:>9.1f} {size / 1024:>9.1f} {all_ms:>9.1f} "
                      f"{all_size / 1024:>9.1f}")
            ms, size = results[SIZES[-1]]
            growth = ms / results[SIZES[0]][0]
            print(f"chat page @{SIZES[-1]} turns: {ms:.1f} ms, {size / 1024:.0f} KB, "
                  f"growth {SIZES[0]}->{SIZES[-1]} {growth:.2f}x\n")
        with app.app_context():
            db.engine.dispose()


if __name__ == "__main__":
    main()
