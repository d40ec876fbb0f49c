"""The demo's long conversation, made once by `init-db --demo` with the offline model, so a first
visit to the viewer shows every fate (FULL, COMPACTED, SUMMARIZED, DROPPED, PINNED, EXCLUDED), a
rolling summary and long-term memories without a hand-made import, and still does after the
visitor's first message.
"""
from contextlib import contextmanager

from sqlalchemy import select

from ..agent import run_turn
from ..hooks import AFTER_TURN
from ..context import set_mark, EXCLUDED, WORDS_MAY_REMAIN, fold_due, queue_summary, refresh_summary
from ..extensions import db
from ..llm import OfflineModel
from ..memories import distil_window, queue_distil
from ..models import Conversation, User
from ..storage import create_conversation, start_turn

TITLE = "A week of questions (demo)"
# compact under a small budget: the newest 2 turns in full, older ones compacted, the oldest
# folded into the summary. The summary is folded as the worker would, but only once
# FOLD_AFTER_TURNS turns wait beyond it: the few that fell out since the last fold are DROPPED,
# "not yet in the summary", and stay so through the visitor's next few messages.
FOLD_AFTER_TURNS = 8
SETTINGS = {"budget": 900, "recent_turns": 2, "fold_after_turns": FOLD_AFTER_TURNS}
# Turn numbers: Alex keeps their name in context (PINNED), and leaves out their favourite colour
# after it was folded into the summary (EXCLUDED: its words may remain in the summary).
PINNED_TURN, LEFT_OUT_TURN = 2, 12

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
def background_held():
    """Keep the after-turn hooks from queuing folds and distils: the seed folds where it
    chooses and distils once at the end, so a queued job would only find nothing left to do."""
    hooks = list(AFTER_TURN)
    AFTER_TURN[:] = [hook for hook in hooks if hook not in (queue_summary, queue_distil)]
    try:
        yield
    finally:
        AFTER_TURN[:] = hooks  # in their order: jobs run inline in tests, in that order


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
    turns = {}
    with background_held():  # folded and distilled here, in line, not by the worker
        for number, question in enumerate(QUESTIONS, 1):
            turns[number] = start_turn(conversation, question)
            for _ in run_turn(turns[number], model, offline):
                pass
            if number == PINNED_TURN:
                set_mark(turns[number], "pinned", user)
                db.session.commit()
            if fold_due(conversation, offline):
                refresh_summary(conversation, model, config=offline)
    set_mark(turns[LEFT_OUT_TURN], "excluded", user)
    db.session.commit()
    distil_window(conversation.id, 1, offline, model)
    return conversation


# What each fate means, in the words `init-db --demo` prints beside the turns that have it.
TOUR = {"FULL": "the newest turns, sent whole",
        "COMPACTED": "older turns, sent as question and answer only",
        "DROPPED": "not sent, and not yet in the summary: the model does not see them{wait}",
        "SUMMARIZED": "not sent word for word: folded into the rolling summary",
        "PINNED": "kept in context: always sent",
        "EXCLUDED": "left out: never sent"}
MAY_REMAIN = ", within the summary's reach: its words may remain there (the viewer offers to " \
             "edit it)"


def turn_ranges(runs) -> str:
    """'turn 2', 'turns 1, 3–11 and 13–17': the runs' turns, numbered from 1."""
    parts = [f"{r.first + 1}" if r.first == r.last else f"{r.first + 1}–{r.last + 1}"
             for r in runs]
    many = len(parts) > 1 or runs[0].first != runs[0].last
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"turn{'s' if many else ''} {listed}"


def tour(conversation, runs) -> list[str]:
    """Where to look in the viewer: each fate with the turns that have it, as planned now."""
    after = (conversation.settings or {}).get("fold_after_turns", 1)
    wait = f" (the summary takes them in once {after} turns wait)" if after > 1 else ""
    lines = []
    for fate, meaning in TOUR.items():
        found = [r for r in runs if r.fate == fate]
        if found:
            folded = fate == EXCLUDED and any(WORDS_MAY_REMAIN in r.reason for r in found)
            lines.append(f"  {fate:<11} {turn_ranges(found)}: {meaning.format(wait=wait)}"
                         + (MAY_REMAIN if folded else ""))
    return lines
