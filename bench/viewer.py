"""Benchmark: the viewer's report (build and render the page) against conversation length.

Builds conversations of 100, 1,000 and 10,000 turns (about a third with tool calls, as in
bench/context_assembly.py) in a temporary SQLite database and times building the report and
rendering the whole page. Sizes are timed in interleaved rounds (100, 1,000, 10,000, 100, …) so a
busy machine slows them alike; each figure is the median over the rounds, and the growth ratio is
measured in the same process against the 100-turn conversation. Run: .venv/bin/python bench/viewer.py
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.context_assembly import build  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.models import Conversation  # noqa: E402
from webapp.viewer.report import build_report  # noqa: E402
from webapp.viewer.views import render_viewer  # noqa: E402

SIZES = [100, 1_000, 10_000]
ROUNDS = 31


def timed_ms(func) -> float:
    started = time.perf_counter()
    func()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"TESTING": True, "WTF_CSRF_ENABLED": False,
                          "DATABASE_URL": f"sqlite:///{tmp}/bench.db"})
        with app.app_context():
            create_schema()
            seed_demo("demo")
            print(f"median of {ROUNDS} interleaved rounds (build the report; build + render the page)\n")
            # bench/context_assembly.py's conversations (alex's), by id
            conversations = {turns: db.session.get(Conversation, build(turns)) for turns in SIZES}

            def page(conversation):
                with app.test_request_context(f"/c/{conversation.id}/viewer"):
                    return render_viewer(build_report(conversation, app.config))[0]

            sizes = {turns: len(page(c)) / 1024 for turns, c in conversations.items()}
            built = {turns: [] for turns in SIZES}
            pages = {turns: [] for turns in SIZES}
            for _ in range(ROUNDS):
                for turns, conversation in conversations.items():
                    built[turns].append(timed_ms(lambda: build_report(conversation, app.config)))
                    pages[turns].append(timed_ms(lambda: page(conversation)))
            print(f"{'turns':>7} {'build ms':>9} {'page ms':>9} {'best page':>10} {'page KB':>8}")
            results = {}
            for turns in SIZES:
                results[turns] = statistics.median(pages[turns])
                print(f"{turns:>7} {statistics.median(built[turns]):>9.2f} {results[turns]:>9.2f} "
                      f"{min(pages[turns]):>10.2f} {sizes[turns]:>8.0f}")
            print("best page: the fastest round, near what an idle machine gives")
            last = results[SIZES[-1]]
            print(f"\nviewer @{SIZES[-1]} turns: {last:.1f} ms, "
                  f"growth {SIZES[0]}->{SIZES[-1]} {last / results[SIZES[0]]:.2f}x")


if __name__ == "__main__":
    main()
