"""Token savings and fact retention of each context strategy, on one scripted 200-turn conversation.

Runs the real agent with the offline model on a temporary SQLite database (background jobs inline),
once per strategy with the default settings. Sent = the prompt tokens of every turn's request
(Turn.context_tokens); resend-all = the same requests with every stored turn resent
(Turn.resend_tokens). Retention = share of probes whose fact is in the context sent at probe time.

    python bench/token_savings.py [--turns 200] [--strategies compact,window] [--budget N] [--verbose]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy import func, update  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.agent.loop import run_turn  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm.offline import OfflineModel  # noqa: E402
from webapp.memory.context import STRATEGIES  # noqa: E402
from webapp.llm.tokens import estimate_messages  # noqa: E402
from webapp.memory import summary_jobs  # noqa: E402
from webapp.memory.summaries import cached_summary, summary_messages  # noqa: E402
from webapp.models import Turn  # noqa: E402
from webapp.storage import all_turns, create_conversation, start_turn  # noqa: E402

# (statement, probe, what must be in the context to answer it)
FACTS = [
    ("My name is Dara.", "What is my name?", "Dara"),
    ("My email is dara.k@example.com.", "What is my email address?", "dara.k@example.com"),
    ("My phone number is 555-0142.", "What is my phone number?", "555-0142"),
    ("I prefer email over phone calls.", "How do I prefer to be contacted?", "email over phone"),
    ("My birthday is 14 March.", "When is my birthday?", "14 March"),
    ("I live in Lyon.", "Where do I live?", "Lyon"),
    ("My favourite colour is teal.", "What is my favourite colour?", "teal"),
    ("I always pay with PayPal.", "How do I usually pay?", "pay with PayPal"),
    ("My company is Brightwater Studio.", "What is my company?", "Brightwater Studio"),
    ("I wear size M in shirts.", "What shirt size do I wear?", "size M"),
    ("My delivery address is 12 Rue Mercière.", "What is my delivery address?", "12 Rue Mercière"),
    ("I'm allergic to latex.", "What am I allergic to?", "latex"),
    ("My account number is AC-88213.", "What is my account number?", "AC-88213"),
    ("I need every invoice sent to billing@brightwater.example.",
     "Where should every invoice be sent?", "billing@brightwater.example"),
    ("I prefer deliveries on Saturdays.", "Which day do I prefer deliveries?", "Saturdays"),
    ("My anniversary is on 2 June.", "When is my anniversary?", "2 June"),
    ("My preferred language is French.", "What is my preferred language?", "French"),
    ("My loyalty card ends in 4471.", "What does my loyalty card end in?", "4471"),
    ("My manager is Ines Dubois.", "Who is my manager?", "Ines Dubois"),
    ("Remember that gift orders need no price on the packing slip.",
     "What did I say about gift orders?", "no price on the packing slip"),
    ("We ship everything to our warehouse in Ghent.", "Where do we ship everything to?", "Ghent"),
    ("My tracking preference is SMS updates.", "What is my tracking preference?", "SMS updates"),
]
FILLER = [
    "Where is order 1042?", "How long does shipping take?", "Can I get a refund for order #1043?",
    "What is your return policy?", "Thanks, that helps.", "Can I get a refund for order #1042?",
    "Yes please.", "Which payment methods do you accept?", "Where is order 1041?",
    "OK, good to know.", "How do I reset my password?", "Do gift cards expire?",
    "What happens if an item arrives damaged?", "Can I cancel order 1044?", "Great, thank you!",
    "How much does express shipping cost?",
]
HOURS_BETWEEN_TURNS = 3  # the conversation spans about 25 days, so `time` has something to drop
VERBOSE = False


def script(turns: int) -> list[tuple[str, int | None]]:
    """(question, index of the probed fact or None): facts early, probes late, filler between."""
    statements = {1 + 2 * i: i for i in range(len(FACTS))}  # turns 1, 3, 5, … hold the facts
    probes = {turns - 4 * (len(FACTS) - i): i for i in range(len(FACTS))}  # every 4th late turn
    lines, filler = [], 0
    for number in range(turns):
        if number in statements:
            lines.append((FACTS[statements[number]][0], None))
        elif number in probes:
            lines.append((FACTS[probes[number]][1], probes[number]))
        else:
            lines.append((FILLER[filler % len(FILLER)], None))
            filler += 1
    return lines


class RecordingModel(OfflineModel):
    """The offline model, keeping the first request of each turn: the context it was sent."""

    def __init__(self):
        self.first_request: list[dict] | None = None

    def stream(self, messages, tools):
        if self.first_request is None:
            self.first_request = messages
        return super().stream(messages, tools)


class SummarizerMeter(OfflineModel):
    """The offline model as the summary job's provider, counting its calls and prompt tokens."""

    def __init__(self):
        self.calls, self.tokens, self.ratio = 0, 0, 1.0

    def stream(self, messages, tools):
        self.calls += 1
        self.tokens += round(estimate_messages(messages) * self.ratio)
        return super().stream(messages, tools)


def run(strategy: str, user, lines) -> dict:
    conversation = create_conversation(user, f"bench: {strategy}")
    conversation.strategy = strategy
    db.session.commit()
    summarizer = SummarizerMeter()
    summary_jobs.get_provider = lambda config: summarizer
    probes = present = recalled = 0
    for question, fact in lines:
        db.session.execute(update(Turn).where(Turn.conversation_id == conversation.id).values(
            created_at=func.datetime(Turn.created_at, f"-{HOURS_BETWEEN_TURNS} hours")))
        model, summarizer.ratio = RecordingModel(), conversation.token_ratio
        turn = start_turn(conversation, question)
        answer = [e.data["text"] for e in run_turn(turn, model) if e.kind == "answer"][-1]
        if fact is not None:
            key = FACTS[fact][2]
            sent = "\n".join(m.get("content") or "" for m in model.first_request[:-1])
            probes, present = probes + 1, present + (key in sent)
            recalled += key.lower() in answer.lower()
            if VERBOSE:
                print(f"  {strategy}: {question} [{'in context' if key in sent else 'missing'}] "
                      f"→ {answer}", file=sys.stderr)
    turns = all_turns(conversation.id)
    summary = cached_summary(conversation)
    return {"strategy": strategy, "sent": sum(t.context_tokens for t in turns),
            "resend": sum(t.resend_tokens for t in turns),
            "retention": 100 * present / probes, "recalled": 100 * recalled / probes,
            "folds": summarizer.calls, "fold_tokens": summarizer.tokens,
            "last": turns[-1].context_tokens,
            "summary": estimate_messages(summary_messages(summary))
            if summary and summary.through_seq >= 0 else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--budget", type=int, default=None,
                        help="History budget in tokens (default: NIMBUS_HISTORY_BUDGET's default).")
    parser.add_argument("--verbose", action="store_true", help="Print every probe to stderr.")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    lines = script(args.turns)
    with tempfile.TemporaryDirectory() as folder:
        settings = {"DATABASE_URL": f"sqlite:///{os.path.join(folder, 'bench.db')}",
                    "NIMBUS_JOBS_IMMEDIATE": True}
        if args.budget:
            settings["NIMBUS_HISTORY_BUDGET"] = args.budget
        app = create_app(settings)
        with app.app_context():
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
            user = find_user(app.config["NIMBUS_DEMO_USER"])
            results = [run(name, user, lines) for name in args.strategies.split(",")]
            db.session.remove()
            db.engine.dispose()
    print(f"{args.turns} turns, {len(FACTS)} planted facts probed once each; default settings "
          f"(history budget {app.config['NIMBUS_HISTORY_BUDGET']}, recent turns "
          f"{app.config['NIMBUS_RECENT_TURNS']}, max age {app.config['NIMBUS_MAX_AGE_DAYS']:g} days, "
          f"one turn every {HOURS_BETWEEN_TURNS} hours)")
    print(f"{'strategy':<11}{'sent':>9}{'resend-all':>11}{'sent %':>8}{'retention':>10}"
          f"{'recalled':>9}{'last turn':>10}{'summary':>8}{'folds':>6}{'+ folds %':>10}")
    for r in results:
        print(f"{r['strategy']:<11}{r['sent']:>9,}{r['resend']:>11,}"
              f"{100 * r['sent'] / r['resend']:>7.1f}%{r['retention']:>9.0f}%{r['recalled']:>8.0f}%"
              f"{r['last']:>10,}{r['summary']:>8,}{r['folds']:>6}"
              f"{100 * (r['sent'] + r['fold_tokens']) / r['resend']:>9.1f}%")
    print("sent: prompt tokens of every turn's request; resend-all: the same with every stored turn;\n"
          "retention: probes whose fact was in the context sent; recalled: answered right by the\n"
          "offline model; folds: summarizer calls (background); + folds %: sent and their prompts")
    compact = next((r for r in results if r["strategy"] == "compact"), None)
    if compact:
        print(f"token savings: compact sends {100 * compact['sent'] / compact['resend']:.1f}% of "
              f"resend-all tokens at {compact['retention']:.0f}% fact retention")


if __name__ == "__main__":
    main()
