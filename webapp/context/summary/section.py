"""The rolling summary of turns that fell out of the window: cached per conversation and style,
folded forward only when new turns fall off, and sent as its own section of the context
(context's init_app adds `summary_section` and `summary_reservation` to webapp/hooks.py).
"""
import logging
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import bindparam, or_, select
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...llm import estimate_messages
from ...models import Conversation, Turn, utcnow
from ...plurals import plural
from . import fold as summarizer
from .models import REFUSED, ConversationSummary
from .room import (MIN_ROOM, fitted, fold_size, has_room, summary_messages,  # noqa: F401
                   summary_room)
from ..assemble import (
    SUMMARY_STRATEGIES,
    Allotment,
    Section,
    looked_up,
    plan_history,
    tenant_settings,
)
from ..pins import marks_of
from ..request import fitted_policy
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


# Built once; read through the connection, as a row, since the request only reads it.
SENT_SUMMARY = (select(ConversationSummary.text, ConversationSummary.through_seq,
                       ConversationSummary.style, ConversationSummary.topics)
                .where(ConversationSummary.conversation_id == bindparam("conversation_id"),
                       ConversationSummary.style == bindparam("style"),
                       ConversationSummary.through_seq >= 0))


def usable(conversation, policy) -> tuple | None:
    """(summary row, its messages, its tokens, a note) as a request planned with `policy`
    sends it (room.fitted: shortened or left out where the window leaves too little), or None;
    the row is looked up once per assemble()."""
    if policy.strategy not in SUMMARY_STRATEGIES or not conversation.has_summary:
        return None
    style = style_of(conversation)

    def lookup():
        return db.session.connection().execute(
            SENT_SUMMARY, {"conversation_id": conversation.id, "style": style}).first()
    row = looked_up(("summary", conversation.id, style), lookup)
    return None if row is None else (row, *fitted(row, policy, conversation.token_ratio or 1.0))


def summary_reservation(conversation, policy, ratio: float) -> int:
    """The summary shares the history budget: its tokens are taken out of it first."""
    found = usable(conversation, policy)
    return found[2] if found else 0


def summary_section(conversation, policy, history) -> Section | None:
    """The summary, when the history no longer holds every turn it covers; without messages
    where the window leaves it no room (its `left_out` says why, and so do its turns' fates)."""
    found = usable(conversation, policy)
    kept = history.window()  # pins alone never make the summary unneeded
    if found is None or (kept and kept[0].seq == 0):  # none kept: all summarized on request
        return None
    summary, messages, tokens, note = found
    detail = {"through_seq": summary.through_seq, "style": summary.style,
              "topics": list(summary.topics)}
    if note:
        detail["shortened" if messages else "left_out"] = note
    return Section("summary", messages, tokens, detail)


def fold_reserve(conversation, policy, config, ratio: float) -> int:
    """The most the summary may take of `policy`'s budget, whatever a fold writes: its room
    where the window cut the budget (room.summary_room; longer ones are shortened to it), else
    its configured size (or its present one, should that have run over)."""
    room = summary_room(policy)
    if room is not None:
        return room
    return max(round(summary_size(config) * ratio),
               summary_reservation(conversation, policy, ratio))


def left_out_through(conversation, config, ahead: bool = False,
                     policy: Allotment | None = None) -> int:
    """The newest turn the next request leaves out (-1: none), planned with the budget the window
    leaves it (request.fitted_policy: from the settings and the window, never the summary); with
    `ahead`, as if the summary took all it may (`fold_reserve`), which no fold it writes
    exceeds: so once a fold reaches that turn, the request leaves out nothing it does not cover."""
    db.session.flush()
    policy = Allotment.of(policy or fitted_policy(conversation, config))
    ratio = conversation.token_ratio or 1.0
    if policy.strategy in SUMMARY_STRATEGIES:
        most = fold_reserve(conversation, policy, config, ratio)
        policy.reserved = most if ahead else min(summary_reservation(conversation, policy, ratio),
                                                 most)
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


def summary_size(config) -> int:
    """The summary's size in tokens: the setting, less when a small window cannot keep the
    fold's reply (a quarter of it at most: the output reserve)."""
    from ...llm import profile_for
    size = config["NIMBUS_SUMMARY_MAX_TOKENS"]
    reserve = profile_for(config).output_reserve(summarizer.reply_tokens(size))
    return max(min(size, reserve * 2 // 3), 32)


@dataclass
class FoldPlan:
    """What one fold starts from, read before the model call and checked again after it."""
    through_seq: int  # what the summary covered (-1: no summary yet)
    text: str
    topics: list[str]
    turns: list[summarizer.Said]  # the turns to fold in, oldest first (none: nothing to read)
    ahead: int  # the newest turn it may cover
    size: int | None = None  # the summary's size in tokens (room.fold_size); None: the setting


def plan_fold(conversation, style: str, config) -> FoldPlan | None:
    """Read what the next fold needs (None: the summary is caught up); writes nothing."""
    summary = cached_summary(conversation, style)
    covered = summary.through_seq if summary else -1
    policy = fitted_policy(conversation, config)
    room = summary_room(policy)
    if left_out_through(conversation, config, policy=policy) <= covered or not has_room(policy):
        return None  # caught up, or no request could carry a summary
    ahead = left_out_through(conversation, config, ahead=True, policy=policy)
    turns = turns_to_fold(conversation.id, covered, ahead, config["NIMBUS_SUMMARY_CHUNK_TURNS"])
    return FoldPlan(covered, summary.text if summary else "",
                    list(summary.topics) if summary else [],
                    [summarizer.Said.of(turn) for turn in turns], ahead,
                    fold_size(room, conversation.token_ratio or 1.0, summary_size(config)))


def fold_turns(provider, plan: FoldPlan, style: str, config, ratio: float):
    """The model call, with no transaction open: (text, topics, the turns it folded). The turns
    are the oldest that fit the window with the reply's reserve; a refusal for size learns the
    window (openai_provider) and the fold is fitted once more, to half the room."""
    from ...llm import ContextTooLong, learn_window, profile_for
    size = plan.size or summary_size(config)
    room = profile_for(config).request_room(summarizer.reply_tokens(size))
    for attempt in (1, 2):
        turns = summarizer.fitting(plan.text, plan.topics, plan.turns, style, size, room, ratio)
        try:
            text, topics = summarizer.fold(provider, plan.text, plan.topics, turns, style, size)
            return text, topics, turns
        except summarizer.SummaryRejected as rejected:
            rejected.turns = turns  # what was sent, for the record
            raise
        except ContextTooLong as error:
            if attempt == 2:
                raise
            log.warning("summary fold refused for size (%s): fitting it again",
                        plural(len(turns), "turn"))
            if error.n_ctx:
                learn_window(config, error.n_ctx)
            size = min(plan.size or summary_size(config), summary_size(config))
            room = profile_for(config).request_room(summarizer.reply_tokens(size))
            room = (room if room else estimate_messages(summarizer.fold_request(
                plan.text, plan.topics, turns, style, size)) * ratio) // 2


def store_fold(conversation_id: str, style: str, plan: FoldPlan, text: str, topics: list[str],
               through_seq: int) -> bool:
    """Write a fold in a short transaction of its own, only over the summary it was made from:
    False when that moved meanwhile (a hand edit, another fold), and nothing is written."""
    summary = db.session.get(ConversationSummary, (conversation_id, style), populate_existing=True)
    if summary is None and plan.through_seq >= 0 or summary is not None and (
            summary.through_seq, summary.text) != (plan.through_seq, plan.text):
        db.session.rollback()
        return False
    if summary is None:
        if db.session.get(Conversation, conversation_id) is None:
            return False  # the conversation was deleted meanwhile: its summary went with it
        summary = ConversationSummary(conversation_id=conversation_id, style=style)
        db.session.add(summary)
    summary.text, summary.topics, summary.through_seq = text, topics, through_seq
    summary.failed_at, summary.failure = None, ""  # this fold worked
    try:
        db.session.commit()
    except IntegrityError:  # another worker stored the first fold meanwhile
        db.session.rollback()
        return False
    return True


def note_refusal(conversation_id: str, style: str, turns, rejected) -> None:
    """The old summary stays, and says why; the next turn's fold tries again."""
    log.warning("summary of %s: fold of turns %s-%s refused: %s", conversation_id,
                turns[0].seq + 1, turns[-1].seq + 1, rejected)
    summary = db.session.get(ConversationSummary, (conversation_id, style), populate_existing=True)
    if summary is None:
        summary = ConversationSummary(conversation_id=conversation_id, style=style, text="",
                                      through_seq=-1, topics=[])
        db.session.add(summary)
    summary.failed_at = utcnow()
    summary.failure = (f"{REFUSED} the summary of turns {turns[0].seq + 1}–"
                       f"{turns[-1].seq + 1}: {rejected}")[:300]
    db.session.commit()


def refresh_summary(conversation, provider, style: str | None = None,
                    config=None) -> tuple[ConversationSummary | None, bool]:
    """Fold newly fallen-off turns into the summary; (summary, whether it is now caught up).

    It folds ahead: every turn that would be left out were the summary at its full size. So a
    summary that grows never uncovers a turn, and folds come one per few turns, not every turn.
    Each round reads, ends its transaction, calls the model holding nothing (no SQLite write
    lock, no PostgreSQL snapshot), then writes in a short transaction (`store_fold`).
    """
    config = config or current_app.config
    style = style or style_of(conversation, config)
    conversation_id = conversation.id
    for _ in range(MAX_ROUNDS):
        plan = plan_fold(conversation, style, config)
        ratio = conversation.token_ratio or 1.0
        db.session.commit()  # ends the reading transaction before the model is asked
        if plan is None:
            return cached_summary(conversation, style), True
        if plan.turns:
            try:
                text, topics, folded = fold_turns(provider, plan, style, config, ratio)
            except summarizer.SummaryRejected as rejected:
                note_refusal(conversation_id, style, getattr(rejected, "turns", plan.turns),
                             rejected)
                return cached_summary(conversation, style), True
            through = folded[-1].seq
        else:  # only left-out or unfinished turns fell off: nothing to read, cover them
            text, topics, through = plan.text, plan.topics, plan.ahead
        if not store_fold(conversation_id, style, plan, text, topics, through):
            if db.session.get(Conversation, conversation_id) is None:
                return None, True  # deleted while the model worked: nothing left to fold
            log.info("summary of %s changed during its fold: folding again from it",
                     conversation_id)
    summary = cached_summary(conversation, style)
    return summary, left_out_through(conversation, config) <= (summary.through_seq
                                                               if summary else -1)
