"""The seed's three refund turns, which the viewer tests look at from every side."""
from .support import ask

REFUND_QUESTIONS = ("Can I get a refund for order #1043?", "OK. What about my other order, 1042?",
                    "Yes please.")
# Turns 2 and 3 in full take 222 history tokens and turn 1 compacted 39 more, so 250 drops turn 1.
DROPPING_BUDGET = 250


def refund_conversation(user):
    """Run the three refund turns with the offline model; return the conversation."""
    _, conversation, _ = ask(user, REFUND_QUESTIONS[0])
    for question in REFUND_QUESTIONS[1:]:
        ask(user, question, conversation)
    return conversation

SUMMARY_BUDGET = 300
LONG_QUESTIONS = REFUND_QUESTIONS + ("How long does shipping take?", "What is my name?")


def summarized_conversation(user):
    """A conversation whose older turns fell out of a small budget: the request then carries
    the system prompt, a memory (the name), the rolling summary and the newest turn."""
    from webapp.extensions import db
    _, conversation, _ = ask(user, "My name is Dara and I live in Lisbon.")
    conversation.settings = {"budget": SUMMARY_BUDGET}
    db.session.commit()
    for question in LONG_QUESTIONS:
        ask(user, question, conversation)
    return conversation
