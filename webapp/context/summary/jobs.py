"""Fold the rolling summary in the background, after the answer has gone out.

An after-turn hook checks cheaply (no model call) whether turns fell off beyond the summary and
queues the job; a lock keeps two workers off one conversation, and Huey retries a failed fold.
"""
import logging

from flask import current_app

from ...extensions import db
from ...jobs import enqueue, job
from ...llm import provider_for
from ...locks import LockBusy, named_lock
from ...models import Conversation, utcnow
from ..assemble import SUMMARY_STRATEGIES
from ..request import fitted_policy
from .section import cached_summary, has_room, left_out_through, refresh_summary, style_of

log = logging.getLogger(__name__)


@job()
def fold_summary(conversation_id: str) -> None:
    """Bring one conversation's summary up to date; queue another round if it is not yet and
    this one moved it on (one that did not would only do the same again)."""
    try:
        with named_lock(f"summary:{conversation_id}", wait=0):
            conversation = db.session.get(Conversation, conversation_id)
            if conversation is None:  # deleted meanwhile: its summary went with it
                return
            before = covered(conversation)
            summary, caught_up = refresh_summary(conversation, provider_for(current_app))
    except LockBusy:
        log.info("summary of %s is being folded by another worker", conversation_id)
        return
    except Exception as error:
        db.session.rollback()  # leave the session usable for whoever shares it; Huey retries
        note_failure(conversation_id, error)
        raise
    if not caught_up and summary is not None and summary.through_seq > before:
        enqueue(fold_summary, conversation_id)
    elif not caught_up:
        log.warning("summary of %s is behind and its fold made no progress: waiting for the "
                    "next turn", conversation_id)


def covered(conversation) -> int:
    """The newest turn the conversation's summary covers (-1: none)."""
    summary = cached_summary(conversation, style_of(conversation))
    return summary.through_seq if summary else -1


RETRY_DELAY = 10  # seconds: job()'s default, which fold_summary uses


def note_failure(conversation_id: str, error: Exception) -> None:
    """Say on the summary that this fold failed, and why; its text stays as it was."""
    from .section import ConversationSummary, style_of
    try:
        conversation = db.session.get(Conversation, conversation_id)
        if conversation is None:
            return
        summary = db.session.get(ConversationSummary, (conversation_id, style_of(conversation)))
        if summary is None:  # nothing folded yet: nothing that could look out of date
            return
        summary.failed_at = utcnow()
        summary.failure = (str(error) or type(error).__name__)[:300]
        db.session.commit()
    except Exception:  # noting must never hide the fold's own error
        db.session.rollback()
        log.exception("could not note the failed fold of %s", conversation_id)


def turns_waiting(conversation, config, policy=None) -> int:
    """Cheap (no model call): how many turns have fallen out of the window beyond the summary."""
    summary = cached_summary(conversation, style_of(conversation, config))
    return left_out_through(conversation, config, policy=policy) - (
        summary.through_seq if summary else -1)


def fold_due(conversation, config) -> bool:
    """Due once the conversation's `fold_after_turns` turns wait (default 1: as soon as one does);
    a larger setting buys fewer summarizer calls with turns the model meanwhile does not see."""
    after = max(int((conversation.settings or {}).get("fold_after_turns", 1)), 1)
    if conversation.strategy not in SUMMARY_STRATEGIES:
        return False
    policy = fitted_policy(conversation, config)
    # A window that leaves the summary no room sends none: a fold would read turns for nothing.
    return has_room(policy) and turns_waiting(conversation, config, policy) >= after


def queue_summary(turn, plan) -> None:
    """After each turn: queue a fold when the conversation's strategy sends a summary and
    enough turns have fallen out of its window (`fold_due`)."""
    if fold_due(turn.conversation, current_app.config):
        enqueue(fold_summary, turn.conversation.id)

