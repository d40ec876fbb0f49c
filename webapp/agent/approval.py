"""Tools that change something run only when the customer asked for it.

A weak model calls a write tool unprompted (asked to repeat a refund check, one opened two
tickets nobody wanted). A write tool declares the customer's words that ask for it; the call runs
when this turn's message says so, or when it answers yes to the previous reply's offer. Otherwise
the model is told the call was refused and the chat shows the question with Yes / No, as the
Agents SDK's tool approval does: Yes sends the customer's own words asking for it.
"""
import re

from sqlalchemy import select

from ..extensions import db
from ..models import Turn

YES = re.compile(r"^\s*(yes|yeah|yep|yup|ya|yea|yah|sure|ok|okay|please do|please|go ahead|do it|do that|"
                 r"sounds good|that would be great|absolutely|definitely|correct|right)\b", re.I)
OFFER = re.compile(r"\?|would you like|shall i|should i|do you want|want me to|i can\b", re.I)
REFUSED = ("Not run: the customer has not asked for this in their own words. Ask them whether "
           "they want it; the chat shows them a Yes / No question. Call it again only after a yes.")


def previous_answer(conversation_id: str, seq: int) -> str:
    if seq <= 0:
        return ""
    return db.session.scalar(select(Turn.answer).where(
        Turn.conversation_id == conversation_id, Turn.seq == seq - 1)) or ""


def asked_for(tool, question: str, offer: str) -> bool:
    """The customer's message asks for this tool's action, or says yes to an offer of it."""
    if tool.asks.search(question or ""):
        return True
    return bool(YES.match(question or "")) and bool(OFFER.search(offer or ""))


def refusal(tool, arguments: dict) -> dict:
    """What the model reads instead of a result, with the question the chat shows."""
    ask = tool.approval(arguments)
    return {"error": REFUSED, "approval": {"question": ask, "yes": tool.confirm(arguments),
                                           "no": "No, thanks."}}


def check(tool, context, question: str, arguments: dict) -> dict | None:
    """None when the call may run (a read, or a write the customer asked for); else the refusal
    to hand the model."""
    if tool is None or tool.asks is None:
        return None
    if asked_for(tool, question, previous_answer(context.conversation.id, context.turn_seq)):
        return None
    return refusal(tool, arguments)
