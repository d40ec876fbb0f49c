"""The rolling summary of turns that fell out of the window: cached per conversation and style,
folded forward only when new turns fall off, and sent as its own section of the context
(context's init_app adds `summary_section` and `summary_reservation` to webapp/hooks.py).
"""
import logging
from datetime import datetime

from flask import current_app
from sqlalchemy import bindparam, or_, select

from ...extensions import db
from ...models import Turn, utcnow
from . import fold as summarizer
from .models import REFUSED, ConversationSummary
from ..assemble import (
    SUMMARY_STRATEGIES,
    Policy,
    Section,
    looked_up,
    plan_history,
    sized,
    tenant_settings,
)
from ..pins import marks_of
from ..tail import newest_first, rows_for

log = logging.getLogger(__name__)
MAX_ROUNDS = 10  # model calls per refresh; a job that is not caught up queues itself again


def style_of(conversation, config=None) -> str:
    config = config or current_app.config
    shop = tenant_settings(conversation).get("summary_style", config["NIMBUS_SUMMARY_STYLE"])
    return (conversation.settings or {}).get("summary_style", shop)


def cached_summary(conversation, style: str | None = None) -> ConversationSummary | None:
    """A primary-key lookup, answered from the session's identity map when already loaded."""
    return db.session.get(ConversationSummary, (conversation.id, style or style_of(conversation)))


def summary_messages(summary: ConversationSummary) -> list[dict]:
    return [{"role": "system", "content": f"Summary of the earlier conversation "
                                          f"(turns 1–{summary.through_seq + 1}):\n{summary.text}"}]


# Built once; read through the connection, as a row, since the request only reads it.
SENT_SUMMARY = (select(ConversationSummary.text, ConversationSummary.through_seq,
                       ConversationSummary.style, ConversationSummary.topics)
                .where(ConversationSummary.conversation_id == bindparam("conversation_id"),
                       ConversationSummary.style == bindparam("style"),
                       ConversationSummary.through_seq >= 0))


def usable(conversation, policy) -> tuple | None:
    """(summary row, its messages, its tokens) or None; looked up once per assemble()."""
    if policy.strategy not in SUMMARY_STRATEGIES or not conversation.has_summary:
        return None
    style = style_of(conversation)

    def lookup():
        row = db.session.connection().execute(
            SENT_SUMMARY, {"conversation_id": conversation.id, "style": style}).first()
        if row is None:
            return None
        messages = summary_messages(row)
        return row, messages, sized(messages, conversation.token_ratio or 1.0)
    return looked_up(("summary", conversation.id, style), lookup)


def summary_reservation(conversation, policy, ratio: float) -> int:
    """The summary shares the history budget: its tokens are taken out of it first."""
    found = usable(conversation, policy)
    return found[2] if found else 0


def summary_section(conversation, policy, history) -> Section | None:
    """The summary, when the history no longer holds every turn it covers."""
    found = usable(conversation, policy)
    kept = history.window()  # pins alone never make the summary unneeded
    if found is None or (kept and kept[0].seq == 0):  # none kept: all summarized on request
        return None
    summary, messages, tokens = found
    return Section("summary", messages, tokens,
                   {"through_seq": summary.through_seq, "style": summary.style,
                    "topics": list(summary.topics)})



def left_out_through(conversation, config, reserve: int | None = None) -> int:
    """The newest turn the next request leaves out (-1: none); with `reserve`, as if the summary
    took that many tokens of the budget instead of its present size."""
    policy = Policy.for_conversation(conversation, config)
    ratio = conversation.token_ratio or 1.0
    if policy.strategy in SUMMARY_STRATEGIES:
        policy.reserved = (summary_reservation(conversation, policy, ratio) if reserve is None
                           else round(reserve * ratio))
    db.session.flush()
    rows = rows_for(conversation, policy.history_budget, ratio, policy.recent_turns)
    kept = plan_history(newest_first(conversation.id, rows=rows), policy, ratio,
                        marks_of(conversation)).window()
    # nothing kept: no turn yet, or "Summarize up to here" on the newest one
    return min(f.seq for f in kept) - 1 if kept else policy.summarize_through


def turns_to_fold(conversation_id: str, after_seq: int, through_seq: int | None,
                  limit: int) -> list[Turn]:
    """Finished turns after `after_seq` (up to `through_seq`), oldest first, at most `limit`."""
    query = select(Turn).where(Turn.conversation_id == conversation_id, Turn.seq > after_seq,
                               Turn.outcome != "pending",  # a left-out turn is never sent
                               or_(Turn.mark.is_(None), Turn.mark != "excluded"))
    if through_seq is not None:
        query = query.where(Turn.seq <= through_seq)
    return list(db.session.scalars(query.order_by(Turn.seq).limit(limit)))


def needs_refresh(conversation, config) -> bool:
    """Cheap (no model call): has a turn fallen off that the summary does not cover yet?"""
    summary = cached_summary(conversation, style_of(conversation, config))
    return left_out_through(conversation, config) > (summary.through_seq if summary else -1)


def refresh_summary(conversation, provider, style: str | None = None,
                    config=None) -> tuple[ConversationSummary | None, bool]:
    """Fold newly fallen-off turns into the summary; (summary, whether it is now caught up).

    It folds ahead: every turn that would be left out were the summary at its full size. So a
    summary that grows never uncovers a turn, and folds come one per few turns, not every turn.
    """
    config = config or current_app.config
    style = style or style_of(conversation, config)
    summary = cached_summary(conversation, style)
    for _ in range(MAX_ROUNDS):
        if left_out_through(conversation, config) <= (summary.through_seq if summary else -1):
            return summary, True
        ahead = left_out_through(conversation, config, config["NIMBUS_SUMMARY_MAX_TOKENS"])
        if summary is None:
            summary = ConversationSummary(conversation_id=conversation.id, style=style, text="",
                                          through_seq=-1, topics=[])
            db.session.add(summary)
        turns = turns_to_fold(conversation.id, summary.through_seq, ahead,
                              config["NIMBUS_SUMMARY_CHUNK_TURNS"])
        if turns:
            try:
                summary.text, summary.topics = summarizer.fold(
                    provider, summary.text, list(summary.topics), turns, style,
                    config["NIMBUS_SUMMARY_MAX_TOKENS"])
            except summarizer.SummaryRejected as rejected:
                # The old summary stays, and says why; the next turn's fold tries again.
                log.warning("summary of %s: fold of turns %s-%s refused: %s", conversation.id,
                            turns[0].seq + 1, turns[-1].seq + 1, rejected)
                summary.failed_at = utcnow()
                summary.failure = (f"{REFUSED} the summary of turns {turns[0].seq + 1}–"
                                   f"{turns[-1].seq + 1}: {rejected}")[:300]
                db.session.commit()
                return summary, True
        summary.through_seq = turns[-1].seq if turns else ahead
        summary.failed_at, summary.failure = None, ""  # this fold worked
        db.session.commit()
    return summary, left_out_through(conversation, config) <= summary.through_seq
