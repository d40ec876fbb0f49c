"""Token savings and fact retention of each context strategy, on one scripted 200-turn conversation.

Runs the real agent with the offline model on a temporary SQLite database (background jobs inline),
once per strategy and history budget (600, 1,200, 3,000, 6,000 tokens). Sent = the prompt tokens
of every turn's request (Turn.context_tokens); resend-all = the same requests with every stored
turn resent (Turn.resend_tokens). Retention is measured by asking: at each probe turn, the request
the agent was sent is given to the offline model with a question about the planted fact, worded
unlike the fact, and no tools, so it answers from the request alone; the answer is scored. "in
request" is the weaker check, whether the fact's string appears anywhere in the request.

Stress mode (--paraphrase, on by default for the strategies that send a summary): the summary is
rewritten as a real model would write it (third person, terse notes, two facts merged per line),
so it no longer holds the customer's own words and its lines are the first evicted at the cap.

    python bench/token_savings.py [--turns 200] [--strategies compact,window] [--budgets 600,1200]
                                  [--no-paraphrase] [--verbose]
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from flask import current_app  # noqa: E402
from sqlalchemy import func, update  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.agent.loop import run_turn  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402
from webapp.llm.offline import OfflineModel  # noqa: E402
from webapp.llm.base import Reply  # noqa: E402
from webapp.llm.messages import user_message  # noqa: E402
from webapp.context.assemble import STRATEGIES, SUMMARY_STRATEGIES  # noqa: E402
from webapp.memories.distiller.distil import MARKER  # noqa: E402
from webapp.memories.distiller.phrasing import in_third_person  # noqa: E402
from webapp.llm.tokens import estimate_messages  # noqa: E402
from webapp.context.summary.section import cached_summary, summary_messages  # noqa: E402
from webapp.models import Turn  # noqa: E402
from webapp.storage import all_turns, create_conversation, start_turn  # noqa: E402

# (statement, the conversation's own question, what the answer must hold, the probe: asked of
# the request alone, worded unlike the statement; it shares a topic word with it, which is all
# the offline model's keyword recall can go on)
FACTS = [
    ("My name is Dara.", "What is my name?", "Dara", "Do you know who I am? My name, I mean."),
    ("My email is dara.k@example.com.", "What is my email address?", "dara.k@example.com",
     "Do you remember my email? The example.com one."),
    ("My phone number is 555-0142.", "What is my phone number?", "555-0142",
     "Do you remember the phone number to ring me on?"),
    ("I prefer email over phone calls.", "How do I prefer to be contacted?", "email over phone",
     "How do I prefer you contact me?"),
    ("My birthday is 14 March.", "When is my birthday?", "14 March",
     "Do you remember when I was born, the birthday?"),
    ("I live in Lyon.", "Where do I live?", "Lyon", "Do you remember which city I live in?"),
    ("My favourite colour is teal.", "What is my favourite colour?", "teal",
     "Do you remember the colour I like best?"),
    ("I always pay with PayPal.", "How do I usually pay?", "PayPal",
     "Do you remember what I pay with?"),
    ("My company is Brightwater Studio.", "What is my company?", "Brightwater Studio",
     "Do you remember the company I work for?"),
    ("I wear size M in shirts.", "What shirt size do I wear?", "size M",
     "Do you remember what size of shirt fits me?"),
    ("My delivery address is 12 Rue Mercière.", "What is my delivery address?", "12 Rue Mercière",
     "Do you remember my street address?"),
    ("I'm allergic to latex.", "What am I allergic to?", "latex",
     "Is there anything I'm allergic to, do you remember?"),
    ("My account number is AC-88213.", "What is my account number?", "AC-88213",
     "Do you remember the number on my account?"),
    ("I need every invoice sent to billing@brightwater.example.",
     "Where should every invoice be sent?", "billing@brightwater.example",
     "Do you remember where to send each invoice?"),
    ("I prefer deliveries on Saturdays.", "Which day do I prefer deliveries?", "Saturday",
     "Do you remember what I prefer for deliveries?"),
    ("My anniversary is on 2 June.", "When is my anniversary?", "2 June",
     "Do you remember the date of our anniversary?"),
    ("My preferred language is French.", "What is my preferred language?", "French",
     "Do you remember which language I'd like you to use?"),
    ("My loyalty card ends in 4471.", "What does my loyalty card end in?", "4471",
     "Do you remember the last digits of my loyalty card?"),
    ("My manager is Ines Dubois.", "Who is my manager?", "Ines Dubois",
     "Do you remember who my boss is, the manager?"),
    ("Remember that gift orders need no price on the packing slip.",
     "What did I say about gift orders?", "no price on the packing slip",
     "Do you remember the rule for packing slips on gifts?"),
    ("We ship everything to our warehouse in Ghent.", "Where do we ship everything to?", "Ghent",
     "Do you remember where our warehouse is?"),
    ("My tracking preference is SMS updates.", "What is my tracking preference?", "SMS updates",
     "Do you remember how I like to get tracking news?"),
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
    """The offline model as the app's provider, counting the summary fold's calls and prompt tokens
    (the distiller's calls pass through uncounted, as they did before it shared the provider)."""

    def __init__(self, paraphrase: bool = False):
        self.calls, self.tokens, self.ratio, self.paraphrase = 0, 0, 1.0, paraphrase

    def stream(self, messages, tools):
        if messages and MARKER in (messages[0].get("content") or ""):  # the distiller's call
            return super().stream(messages, tools)
        self.calls += 1
        self.tokens += round(estimate_messages(messages) * self.ratio)
        if not self.paraphrase:
            return super().stream(messages, tools)
        reply = list(super().stream(messages, tools))[-1]
        return iter([Reply(paraphrased(reply.text), usage=reply.usage)])


def terse(line: str) -> str:
    """A real model's note: third person, no articles, 'X is Y' as 'X: Y'."""
    text = line.removeprefix("- ")
    if text.startswith("User: "):
        text = in_third_person(text[len("User: "):], "Customer")
        text = re.sub(r"^Customer's (\w+(?: \w+)?) is (?:on )?", lambda m: f"{m.group(1)}: ", text)
    elif text.startswith("Nimbus: "):
        text = "Agent " + text[len("Nimbus: "):]
    text = re.sub(r"\b(?:the|a|an) ", "", text).rstrip(".")
    return text[:1].upper() + text[1:]


def paraphrased(summary: str) -> str:
    """Rewrite the summary in a model's style: terse notes, two merged into each sentence."""
    body, _, topics = summary.rpartition("\nTopics:")
    notes = [terse(line) for line in body.splitlines() if line.strip()]
    merged = ["; ".join(notes[i:i + 2]) + "." for i in range(0, len(notes), 2)]
    return "\n".join(merged) + "\nTopics:" + topics


def answer_alone(request: list[dict], probe: str) -> str:
    """The offline model's answer to `probe` given only the request, and no tools."""
    return list(OfflineModel().stream(request + [user_message(probe)], []))[-1].text


def run(strategy: str, user, lines, budget: int, paraphrase: bool = False) -> dict:
    conversation = create_conversation(user, f"bench: {strategy} {budget}")
    conversation.strategy, conversation.settings = strategy, {"budget": budget}
    db.session.commit()
    summarizer = SummarizerMeter(paraphrase)
    current_app.extensions["provider_factory"] = lambda config: summarizer  # the fold's model
    probes = present = answered = 0
    for question, fact in lines:
        db.session.execute(update(Turn).where(Turn.conversation_id == conversation.id).values(
            created_at=func.datetime(Turn.created_at, f"-{HOURS_BETWEEN_TURNS} hours")))
        model, summarizer.ratio = RecordingModel(), conversation.token_ratio
        turn = start_turn(conversation, question)
        for _ in run_turn(turn, model):
            pass
        if fact is not None:
            _, _, key, probe = FACTS[fact]
            request = model.first_request[:-1]  # what was sent before the turn's own question
            sent = "\n".join(m.get("content") or "" for m in request)
            answer = answer_alone(request, probe)
            probes, present = probes + 1, present + (key in sent)
            answered += key.lower() in answer.lower()
            if VERBOSE:
                print(f"  {strategy} {budget}: {probe} [{'in request' if key in sent else 'missing'}]"
                      f" → {answer}", file=sys.stderr)
    turns = all_turns(conversation.id)
    summary = cached_summary(conversation)
    return {"strategy": strategy + (" (para)" if paraphrase else ""), "budget": budget,
            "sent": sum(t.context_tokens for t in turns),
            "resend": sum(t.resend_tokens for t in turns),
            "present": 100 * present / probes, "retention": 100 * answered / probes,
            "folds": summarizer.calls, "fold_tokens": summarizer.tokens,
            "last": turns[-1].context_tokens,
            "summary": estimate_messages(summary_messages(summary))
            if summary and summary.through_seq >= 0 else 0}


def print_row(r: dict) -> None:
    print(f"{r['strategy']:<18}{r['budget']:>7,}{r['sent']:>10,}{r['resend']:>11,}"
          f"{100 * r['sent'] / r['resend']:>7.1f}%{r['present']:>10.0f}%{r['retention']:>9.0f}%"
          f"{r['last']:>10,}{r['summary']:>8,}{r['folds']:>6}"
          f"{100 * (r['sent'] + r['fold_tokens']) / r['resend']:>9.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--budgets", default="600,1200,3000,6000",
                        help="History budgets in tokens, comma-separated.")
    parser.add_argument("--no-paraphrase", action="store_true",
                        help="Skip the stress runs with a paraphrasing summarizer.")
    parser.add_argument("--verbose", action="store_true", help="Print every probe to stderr.")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    lines = script(args.turns)
    budgets = [int(b) for b in args.budgets.split(",")]
    strategies = args.strategies.split(",")
    with tempfile.TemporaryDirectory() as folder:
        app = create_app({"DATABASE_URL": f"sqlite:///{os.path.join(folder, 'bench.db')}",
                          "NIMBUS_JOBS_IMMEDIATE": True})
        default = app.config["NIMBUS_HISTORY_BUDGET"]
        with app.app_context():
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
            runs = [(name, budget, False) for budget in budgets for name in strategies]
            if not args.no_paraphrase:
                runs += [(name, budget, True) for budget in budgets for name in strategies
                         if name in SUMMARY_STRATEGIES]
            results = []
            for name, budget, paraphrase in runs:
                results.append(run(name, find_user(app.config["NIMBUS_DEMO_USER"]), lines,
                                   budget, paraphrase))
            db.session.remove()
            db.engine.dispose()
    print(f"{args.turns} turns, {len(FACTS)} planted facts probed once each; recent turns "
          f"{app.config['NIMBUS_RECENT_TURNS']}, max age {app.config['NIMBUS_MAX_AGE_DAYS']:g} "
          f"days, one turn every {HOURS_BETWEEN_TURNS} hours; default history budget {default:,}")
    print(f"{'strategy':<18}{'budget':>7}{'sent':>10}{'resend-all':>11}{'sent %':>8}"
          f"{'in request':>11}{'retention':>10}{'last turn':>10}{'summary':>8}{'folds':>6}"
          f"{'+ folds %':>10}")
    for index, r in enumerate(results):
        if index and (r["budget"] != results[index - 1]["budget"]
                      or r["strategy"].endswith("(para)") != results[index - 1]["strategy"]
                      .endswith("(para)")):
            print()
        print_row(r)
    print("sent: prompt tokens of every turn's request; resend-all: the same with every stored turn;\n"
          "in request: probes whose fact's string was in the request; retention: probes the\n"
          "offline model answered right from the request alone, asked in other words; folds:\n"
          "summarizer calls (background); + folds %: sent and their prompts; (para): summary\n"
          "rewritten by a paraphrasing summarizer (third person, terse, two facts a line)")
    compact = next((r for r in results if r["strategy"] == "compact" and r["budget"] == default),
                   None)
    if compact:
        print(f"token savings: compact sends {100 * compact['sent'] / compact['resend']:.1f}% of "
              f"resend-all tokens at {compact['retention']:.0f}% fact retention")


if __name__ == "__main__":
    main()
