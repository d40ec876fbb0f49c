"""The demo's long conversation, made once by `init-db --demo` with the offline model, so a first
visit to the viewer shows every fate (FULL, COMPACTED, SUMMARIZED, DROPPED), a rolling summary and
long-term memories without a hand-made import.
"""
from contextlib import contextmanager

from sqlalchemy import select

from ..agent.loop import AFTER_TURN, run_turn
from ..context.summary.jobs import queue_summary
from ..context.summary.section import refresh_summary
from ..extensions import db
from ..llm.offline import OfflineModel
from ..memories.distiller import distil_window
from ..models import Conversation, User
from ..storage import create_conversation, start_turn

TITLE = "A week of questions (demo)"
# compact under a small budget: the newest 2 turns in full, older ones compacted, the oldest
# folded into the summary. The summary is folded once, after FOLD_AFTER turns, as if the
# background worker had not run since: the turns that fell out later are DROPPED, "not yet in
# the summary", until the next message queues the fold.
SETTINGS = {"budget": 900, "recent_turns": 2}
FOLD_AFTER = 22

QUESTIONS = [
    "Hi",
    "My name is Alex and I live in Porto.",
    "I prefer email over phone calls.",
    "Can I get a refund for order #1043?",
    "OK. What about my other order?",
    "Yes please.",
    "How long does shipping take?",
    "Do you ship internationally?",
    "What payment methods do you accept?",
    "Where is my order #1041?",
    "How do I return an item?",
    "My favourite colour is green.",
    "Do gift cards expire?",
    "How do I reset my password?",
    "What does express shipping cost?",
    "Can I change the delivery address of order #1044?",
    "What is the warranty on my espresso grinder?",
    "Remember that I am allergic to wool.",
    "What are my orders?",
    "How can I cancel an order?",
    "My headphones arrived damaged. What can I do?",
    "How do I contact support?",
    "What is the status of order #1045?",
    "What is your refund policy?",
    "Is standard shipping free?",
    "Where is my order #1042?",
    "Do you sell gift cards?",
    "What is my name?",
    "Where do I live?",
    "How long does international delivery take?",
    "Where is my order #1043?",
]


@contextmanager
def summary_fold_held():
    """Keep the after-turn hook from queuing folds: the seed folds once, where it chooses."""
    held = queue_summary in AFTER_TURN
    if held:
        AFTER_TURN.remove(queue_summary)
    try:
        yield
    finally:
        if held and queue_summary not in AFTER_TURN:
            AFTER_TURN.append(queue_summary)


def seeded_conversation(user: User) -> Conversation | None:
    return db.session.scalar(select(Conversation).where(
        Conversation.user_id == user.id, Conversation.title == TITLE,
        Conversation.deleted_at.is_(None)))


def seed_long_conversation(user: User, config) -> Conversation | None:
    """Make the long conversation for `user` once (None when it exists): deterministic, offline."""
    if seeded_conversation(user) is not None:
        return None
    conversation = create_conversation(user, TITLE)
    conversation.strategy, conversation.settings = "compact", dict(SETTINGS)
    db.session.commit()
    model = OfflineModel()
    # The same on every machine: no configured server is asked anything, not even its window.
    offline = {**config, "OPENAI_API_KEY": None, "OPENAI_BASE_URL": None,
               "NIMBUS_CONTEXT_WINDOW": None, "NIMBUS_PROVIDER_SLOTS": None}
    with summary_fold_held():
        for number, question in enumerate(QUESTIONS, 1):
            for _ in run_turn(start_turn(conversation, question), model, offline):
                pass
            if number == FOLD_AFTER:
                refresh_summary(conversation, model, config=offline)
    distil_window(conversation.id, 1, offline, model)
    return conversation
