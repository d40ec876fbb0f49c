"""Measure the rolling summary's fold-ahead: the model calls it saves against the tokens its
overlap costs (turns the history still sends that the summary covers too).

Runs bench/token_savings.py's scripted 200-turn conversation under `compact` with the default
settings twice in one process: as shipped (each fold covers every turn that would fall off were
the summary at its full size) and folding exactly what fell off. Every request's plan is read
from the agent's after-turn hook, so the overlap is the one actually sent, once per model call.

    python bench/summary_overlap.py [--turns 200]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import token_savings  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp import hooks  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.context.summary import section  # noqa: E402
from webapp.context.assemble import DROPPED  # noqa: E402


class OverlapMeter:
    """An after-turn hook adding up, over every request, the history tokens also in the summary."""

    def __init__(self):
        self.tokens = self.requests = self.pending = 0

    def __call__(self, turn, plan):
        summary = plan.section("summary")
        if summary is None:
            return
        through = summary.detail["through_seq"]
        overlap = [f.tokens for f in plan.history.kept() if f.seq <= through]
        calls = len((turn.manifest or {}).get("calls") or [None])  # each call resends it
        self.tokens += sum(overlap) * calls
        self.requests += bool(overlap)
        self.pending += sum(f.fate == DROPPED and f.seq > through for f in plan.history.fates)


def user_budget(user) -> int:
    """The default history budget: what a conversation gets when nobody tuned it."""
    from flask import current_app
    return current_app.config["NIMBUS_HISTORY_BUDGET"]


def measure(user, lines, exact: bool) -> dict:
    meter, original = OverlapMeter(), section.left_out_through
    if exact:  # fold what fell off, not what would fall off at the summary's full size
        section.left_out_through = lambda c, config, ahead=False, policy=None: \
            original(c, config, policy=policy)
    hooks.AFTER_TURN.append(meter)
    try:
        result = token_savings.run("compact", user, lines, user_budget(user))
    finally:
        hooks.AFTER_TURN.remove(meter)
        section.left_out_through = original
    return {**result, "overlap": meter.tokens, "overlap_requests": meter.requests,
            "pending": meter.pending}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    lines = token_savings.script(args.turns)
    with tempfile.TemporaryDirectory() as folder:
        app = create_app({"DATABASE_URL": f"sqlite:///{os.path.join(folder, 'bench.db')}",
                          "NIMBUS_JOBS_IMMEDIATE": True})
        with app.app_context():
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
            user = find_user(app.config["NIMBUS_DEMO_USER"])
            ahead, exact = measure(user, lines, False), measure(user, lines, True)
    print(f"{args.turns} turns under compact, default settings")
    print(f"{'folding':<8}{'sent':>9}{'folds':>6}{'fold tokens':>12}{'overlap':>9}"
          f"{'requests':>9}{'retention':>10}")
    for name, r in (("ahead", ahead), ("exact", exact)):
        print(f"{name:<8}{r['sent']:>9,}{r['folds']:>6}{r['fold_tokens']:>12,}{r['overlap']:>9,}"
              f"{r['overlap_requests']:>9}{r['retention']:>9.0f}%")
    print("sent: prompt tokens of every model call; folds, fold tokens: summarizer calls and\n"
          "their prompts; overlap: history tokens also covered by the summary, over all calls;\n"
          "requests: turns whose request carried some overlap")
    saved = exact["fold_tokens"] - ahead["fold_tokens"]
    print(f"summary overlap: fold-ahead saves {exact['folds'] - ahead['folds']} model calls "
          f"({saved:,} prompt tokens) and costs {ahead['overlap']:,} overlap tokens "
          f"({ahead['overlap'] / max(ahead['sent'], 1):.1%} of sent)")


if __name__ == "__main__":
    main()
