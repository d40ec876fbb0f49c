"""Benchmark: server time and size of the chat page against how many conversations one person has.

Gives one guest 20, 200, 2,000 and then 20,000 conversations (a tenth of them archived, five
pinned, each with one answered turn) in a temporary SQLite database, and times GET / and
GET /c/<id> (median of repeated requests) and one "Show more conversations" page; prints 20,000
as a ratio of 20 and of 200 (the first size that fills each section's NIMBUS_SIDEBAR_PAGE: from
there the page holds the same items, so its time should stay flat).
Run: .venv/bin/python bench/sidebar_page.py
"""
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy import insert  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm.messages import assistant_message, compact_turn, user_message  # noqa: E402
from webapp.models import Conversation, Turn, User, new_conversation_id, utcnow  # noqa: E402

SIZES = [20, 200, 2_000, 20_000]
REPEATS = 21


def add_conversations(user: User, count: int, start: int) -> str:
    """`count` more conversations of `user`, each with one answered turn; the newest one's id."""
    now, conversations, turns = utcnow(), [], []
    for n in range(start, start + count):
        at = now - timedelta(minutes=n)
        question, answer = f"Where is my order #{1000 + n}?", f"Order #{1000 + n} has shipped."
        messages = [user_message(question), assistant_message(answer)]
        conversations.append({
            "id": new_conversation_id(), "tenant_id": user.tenant_id, "user_id": user.id,
            "title": f"Order #{1000 + n}", "strategy": "compact", "settings": {}, "turn_count": 1,
            "created_at": at, "updated_at": at, "archived_at": at if n % 10 == 9 else None,
            "pinned_at": at if n < 5 else None})
        turns.append({"conversation_id": conversations[-1]["id"], "seq": 0, "messages": messages,
                      "compact": compact_turn(messages), "question": question, "answer": answer,
                      "outcome": "answered", "trace": [], "created_at": at})
    for first in range(0, count, 1000):
        db.session.execute(insert(Conversation), conversations[first:first + 1000])
        db.session.execute(insert(Turn), turns[first:first + 1000])
    db.session.commit()
    return conversations[0]["id"]


def median_ms(client, url: str, headers=None) -> tuple[float, int]:
    timings, size = [], 0
    for _ in range(REPEATS):
        started = time.perf_counter()
        response = client.get(url, headers=headers)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
        size = len(response.data)
    return statistics.median(timings), size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp}/bench.db"})
        with app.app_context():
            create_schema()
            seed_demo("demo")
        client = app.test_client()
        page = client.get("/").text  # a browser's first visit: its guest is stored at its first write
        client.environ_base["HTTP_X_CSRFTOKEN"] = re.search(r'csrf-token" content="([^"]+)"', page).group(1)
        client.post("/messages", data={"message": ""})
        with client.session_transaction() as session:
            user_id = int(str(session["_user_id"]).partition(":")[0])  # Flask-Login's "id:token"
        print(f"sidebar page of {app.config['NIMBUS_SIDEBAR_PAGE']} per section, "
              f"median of {REPEATS} requests\n")
        print(f"{'conversations':>13} {'/ ms':>8} {'/ KB':>7} {'/c/ID ms':>9} {'more ms':>8}")
        results, have = {}, 0
        for size in SIZES:
            with app.app_context():
                newest = add_conversations(db.session.get(User, user_id), size - have, have)
                db.session.remove()
            have = size
            page_ms, page_size = median_ms(client, "/")
            open_ms, _ = median_ms(client, f"/c/{newest}")
            link = re.search(r'hx-get="(/conversations\?section=recent[^"]+)"',
                             client.get("/").text)
            more_ms = median_ms(client, link.group(1).replace("&amp;", "&"),
                                {"HX-Request": "true"})[0] if link else float("nan")
            results[size] = (page_ms, page_size, open_ms, more_ms)
            print(f"{size:>13,} {page_ms:>8.1f} {page_size / 1024:>7.1f} {open_ms:>9.1f} "
                  f"{more_ms:>8.1f}")
        large, large_kb, large_open, _ = results[SIZES[-1]]
        print()
        for base in SIZES[:2]:
            small, small_kb, small_open, _ = results[base]
            print(f"{SIZES[-1]:,} vs {base} conversations: / {large / small:.2f}x time, "
                  f"{large_kb / small_kb:.2f}x size; /c/ID {large_open / small_open:.2f}x time")
        with app.app_context():
            db.engine.dispose()


if __name__ == "__main__":
    main()
