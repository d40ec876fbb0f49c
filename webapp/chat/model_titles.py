"""A title the model writes, as other chat apps have: after the first answer, in the background.

The first-message title (webapp/titles.py) is given at once and stays the fallback. With a real
model configured and NIMBUS_MODEL_TITLES on, a job asks the model for a few words once the first
turn is answered, holding no transaction across the call, and replaces the title only if it is
still the one Nimbus gave (a person's rename always wins). The reply is cleaned to plain words;
one that is empty, a sentence or markup is ignored.
"""
import logging
import re

from flask import current_app

from ..extensions import db
from ..jobs import enqueue, job
from ..llm import is_offline, provider_for, Reply
from ..models import Conversation, Turn
from ..titles import short_title

log = logging.getLogger(__name__)
MAX_WORDS, MAX_CHARS = 8, 60
QUOTES = " \"'“”‘’«»"
TITLE_PROMPT = ("Write a title of 2 to 6 words for this support conversation, like a chat app's "
                "sidebar shows. Reply with the title only: no quotes, no full stop, no 'Title:'.")


def title_request(question: str, answer: str) -> list[dict]:
    return [{"role": "system", "content": TITLE_PROMPT},
            {"role": "user", "content": f"Customer: {question[:1500]}\n\nAssistant: {answer[:1500]}"}]


def cleaned_title(text: str) -> str | None:
    """The reply as a sidebar title, or None when it is not one: no markup, quotes, labels or
    trailing full stop; at most MAX_WORDS words and MAX_CHARS characters."""
    text = re.sub(r"<(script|style)\b.*?</\1\s*>", "", text, flags=re.I | re.S)
    line = next((line for line in text.splitlines() if line.strip()), "")
    line = re.sub(r"<[^>]*>|[*_`#>\[\]]", "", line)  # tags and Markdown markers
    line = re.sub(r"^\s*(?:title|subject)\s*:\s*", "", line, flags=re.I)
    line = re.sub(r"[.!,;:]*$", "", " ".join(line.split()).strip(QUOTES)).strip(QUOTES)
    line = "".join(ch for ch in line if ch.isprintable())
    if not re.search(r"\w", line) or len(line.split()) > MAX_WORDS or len(line) > MAX_CHARS:
        return None
    return line[0].upper() + line[1:]


@job()
def write_title(conversation_id: str) -> None:
    """Ask the model for the conversation's title; keep today's unless it is still Nimbus's own."""
    conversation = db.session.get(Conversation, conversation_id)
    first = db.session.get(Turn, _first_turn_id(conversation_id)) if conversation else None
    if first is None or not first.answer.strip():
        return
    given, question, answer = conversation.title, first.question or "", first.answer
    if given != short_title(question):
        return  # renamed by a person, or imported with its own title
    db.session.rollback()  # hold nothing while the model writes
    provider = provider_for(current_app)
    options = {"purpose": "background", "max_tokens": 24} if provider.takes_options else {}
    reply = None
    for chunk in provider.stream(title_request(question, answer), [], **options):
        if isinstance(chunk, Reply):
            reply = chunk
    title = cleaned_title(reply.text) if reply is not None else None
    if title is None:
        log.info("kept the title of %s: the model's reply was not a title", conversation_id)
        return
    conversation = db.session.get(Conversation, conversation_id)
    if conversation is not None and conversation.title == given:  # not renamed meanwhile
        conversation.title = title
        db.session.commit()


def _first_turn_id(conversation_id: str) -> int | None:
    return db.session.scalar(db.select(Turn.id).where(
        Turn.conversation_id == conversation_id, Turn.seq == 0))


def queue_title(turn, plan) -> None:
    """After the first answered turn, with a real model and titles by model on: queue the job."""
    config = current_app.config
    if turn.seq == 0 and turn.outcome == "answered" and config.get("NIMBUS_MODEL_TITLES", True) \
            and not is_offline(current_app):
        enqueue(write_title, turn.conversation_id)
