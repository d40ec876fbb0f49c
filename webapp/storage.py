"""Conversations and turns: create, find for an owner, append, list and purge."""
from datetime import timedelta

from sqlalchemy import case, delete, func, or_, select
from sqlalchemy.orm.attributes import set_committed_value

from .titles import short_title
from .extensions import db
from .llm import (compact_turn, estimate_messages, final_answer, storable_text as valid_text,
                  user_message)
from .models import Conversation, Turn, User, new_conversation_id, utcnow

TITLE_CHARS = 60


def new_conversation(user: User, title: str | None = None) -> Conversation:
    """A conversation of `user`, added to the session but not committed."""
    shop = user.tenant.settings or {}  # an admin may choose the strategy new chats start with
    conversation = Conversation(tenant_id=user.tenant_id, user_id=user.id,
                                title=title or "New conversation",
                                strategy=shop.get("strategy") or "compact")
    db.session.add(conversation)
    return conversation


def create_conversation(user: User, title: str | None = None) -> Conversation:
    conversation = new_conversation(user, title)
    db.session.commit()
    return conversation


def get_owned_conversation(conversation_id: str, user: User) -> Conversation | None:
    """The conversation if this user owns it; a foreign or unknown id looks the same: None."""
    conversation = db.session.get(Conversation, str(conversation_id)[:64])
    if conversation is None or conversation.user_id != user.id or conversation.deleted_at:
        return None
    return conversation


def get_deleted_conversation(conversation_id: str, user: User) -> Conversation | None:
    """This user's conversation deleted moments ago, still in its undo window; else None."""
    from flask import current_app
    conversation = db.session.get(Conversation, str(conversation_id)[:64])
    if conversation is None or conversation.user_id != user.id or not conversation.deleted_at:
        return None
    window, now = timedelta(seconds=current_app.config["NIMBUS_DELETE_UNDO_SECONDS"]), utcnow()
    if conversation.deleted_at < now - window:
        return None  # too late, even if the worker has not deleted it for good yet
    if conversation.deleted_at > now:
        return None  # hidden ahead of now: an import still writing it, or cut off midway
    return conversation


def list_conversations(user: User) -> list[Conversation]:
    return list(db.session.scalars(select(Conversation).where(Conversation.user_id == user.id,
                                                              Conversation.deleted_at.is_(None))
                                   .order_by(Conversation.updated_at.desc())))


def get_turn(conversation: Conversation, seq: int) -> Turn | None:
    return db.session.scalar(select(Turn).where(Turn.conversation_id == conversation.id,
                                                Turn.seq == seq))


def newest_turn(conversation: Conversation) -> Turn | None:
    """The last turn, through the (conversation, seq) index: only it can be pending."""
    return db.session.scalar(select(Turn).where(Turn.conversation_id == conversation.id)
                             .order_by(Turn.seq.desc()).limit(1))


def pending_turn(conversation: Conversation) -> Turn | None:
    """The turn whose reply is still being written, if any."""
    return db.session.scalar(select(Turn).where(
        Turn.conversation_id == conversation.id, Turn.outcome == "pending")
        .order_by(Turn.seq.desc()).limit(1))


def start_conversation(user: User, question: str, title: str | None = None) -> Turn:
    """A new conversation with its first question, committed together: a refused send leaves no
    empty conversation behind."""
    conversation = new_conversation(user, title)
    conversation.id = new_conversation_id()  # the turn's, before anything is written: one INSERT each
    turn = add_turn(conversation, question, 0)  # nothing to look up in a conversation this new
    set_committed_value(turn, "conversation", conversation)  # held already: not read back
    return turn


def start_turn(conversation: Conversation, question: str) -> Turn:
    """Store the question at once as a pending turn; a retry of the same pending question reuses it."""
    pending = pending_turn(conversation)
    if pending is not None and pending.question == question:
        return pending
    return append_turn(conversation, question)


def append_turn(conversation: Conversation, question: str, commit: bool = True) -> Turn:
    """The question stored as the conversation's next turn, pending (the caller knows none is);
    `commit` False leaves it in the caller's transaction (flushed)."""
    # Count from the table, not the loaded row: another worker may have added turns since.
    last = db.session.scalar(select(func.max(Turn.seq)).where(Turn.conversation_id == conversation.id))
    return add_turn(conversation, question, 0 if last is None else last + 1, commit)


def add_turn(conversation: Conversation, question: str, seq: int, commit: bool = True) -> Turn:
    """The question stored as pending turn `seq` of the conversation, committed (or flushed)."""
    messages = [user_message(question)]
    turn = Turn(conversation_id=conversation.id, seq=seq, messages=messages,
                compact=messages, question=question, outcome="pending",
                full_tokens=estimate_messages(messages), compact_tokens=estimate_messages(messages))
    conversation.turn_count = seq + 1
    conversation.updated_at = utcnow()
    if conversation.title == "New conversation":  # the terminal's and the API's chats too
        conversation.title = short_title(question)
    db.session.add(turn)
    if commit:
        commit_keeping_rows()
    else:
        db.session.flush()
    return turn


def commit_keeping_rows() -> None:
    """Commit without expiring what the session holds: the rows just written are as written,
    and the page that shows them would read each back (the person, the shop, the
    conversation, the turn) on its way to the reply."""
    session = db.session()
    session.expire_on_commit = False
    try:
        session.commit()
    finally:
        session.expire_on_commit = True


def checkpoint_turn(turn: Turn, messages: list[dict]) -> None:
    """Store a pending turn's progress (well-formed) now, so a crash cannot lose it."""
    turn.messages = messages
    turn.heartbeat_at = utcnow()
    db.session.commit()


def finish_turn(turn: Turn, messages: list[dict], outcome: str, trace: list, usage: dict,
                context_tokens: int, resend_tokens: int, token_ratio: float | None = None,
                manifest: dict | None = None) -> Turn:
    """Store the whole turn with its precomputed compact form, sizes and request manifest, in one
    short transaction."""
    conversation = turn.conversation
    # Whatever reached here (an old checkpoint, a tool's result), it is stored as valid UTF-8.
    messages, trace = valid_text(messages), valid_text(trace)
    if token_ratio is not None:  # measured on the turn's first call, written only now
        conversation.token_ratio = token_ratio
    turn.messages = messages
    turn.compact = compact_turn(messages)
    turn.answer = final_answer(messages)
    turn.full_tokens = estimate_messages(messages)
    turn.compact_tokens = estimate_messages(turn.compact)
    turn.tool_calls = sum(len(m.get("tool_calls") or []) for m in messages)
    turn.outcome = outcome
    turn.heartbeat_at = utcnow()  # when it finished: its vector's job gets a moment to run
    turn.trace = trace
    turn.prompt_tokens = usage.get("prompt_tokens")
    turn.completion_tokens = usage.get("completion_tokens")
    turn.context_tokens = context_tokens
    turn.resend_tokens = resend_tokens
    turn.manifest = manifest
    # An SQL increment, so a stale in-memory value never overwrites another worker's total.
    conversation.history_tokens = Conversation.history_tokens + turn.full_tokens
    conversation.updated_at = utcnow()
    db.session.commit()
    return turn


def turns_page(conversation_id: str, *, before: int | None = None, after: int | None = None,
               limit: int = 30) -> tuple[list[Turn], bool]:
    """Up to `limit` turns in order, the newest before `before` (or the oldest after `after`),
    and whether more lie beyond them in that direction; the (conversation, seq) index keeps it flat."""
    query = select(Turn).where(Turn.conversation_id == conversation_id)
    if after is not None:
        rows = list(db.session.scalars(query.where(Turn.seq > after).order_by(Turn.seq).limit(limit + 1)))
        return rows[:limit], len(rows) > limit
    if before is not None:
        query = query.where(Turn.seq < before)
    rows = list(db.session.scalars(query.order_by(Turn.seq.desc()).limit(limit + 1)))
    return rows[:limit][::-1], len(rows) > limit


def all_turns(conversation_id: str) -> list[Turn]:
    return list(db.session.scalars(select(Turn).where(Turn.conversation_id == conversation_id)
                                   .order_by(Turn.seq)))


def delete_conversation_for_good(conversation: Conversation) -> None:
    """Delete the row and all that hangs off it, with no undo (the chat's Delete only marks it)."""
    db.session.delete(conversation)
    db.session.commit()


def mark_deleted(conversation: Conversation) -> None:
    """Hide a conversation at once; purge_deleted removes it for good after the undo window."""
    conversation.deleted_at = utcnow()
    db.session.commit()


def restore_conversation(conversation: Conversation) -> None:
    conversation.deleted_at = None
    db.session.commit()


def purge_deleted(user: User, seconds: float) -> int:
    """Really delete this user's conversations deleted more than `seconds` ago."""
    cutoff = utcnow() - timedelta(seconds=seconds)
    expired = (Conversation.user_id == user.id, Conversation.deleted_at < cutoff)
    if db.session.scalar(select(Conversation.id).where(*expired).limit(1)) is None:
        return 0  # the usual case: a read, so page views take no write lock
    result = db.session.execute(delete(Conversation).where(*expired))
    db.session.commit()
    return result.rowcount


def last_message_at():
    """When a conversation last had a message: its newest turn (an import keeps the turns'
    own times), or its creation when it has none."""
    newest = select(func.max(Turn.created_at)).where(
        Turn.conversation_id == Conversation.id).scalar_subquery()
    return func.coalesce(newest, Conversation.created_at)


def active_at():
    """When a conversation was last touched, for retention: its last message, or its import when
    later (an export's dates may be years old; the person brought it here just now)."""
    last = last_message_at()
    return case((Conversation.imported_at > last, Conversation.imported_at), else_=last)


def purgeable(days: int, undo_seconds: float):
    """Conversations with no message (nor import) for `days` days, and those their owner deleted
    whose undo window has passed."""
    now = utcnow()
    return or_(active_at() < now - timedelta(days=days),
               Conversation.deleted_at < now - timedelta(seconds=undo_seconds))


def purge_candidates(days: int, undo_seconds: float) -> list:
    """(id, title, owner's email, last message, turns, deleted_at) of what purge would delete."""
    turns = select(func.count()).where(Turn.conversation_id == Conversation.id).scalar_subquery()
    return db.session.execute(
        select(Conversation.id, Conversation.title, User.email,
               active_at().label("last_message_at"), turns.label("turns"),
               Conversation.deleted_at)
        .join(User, User.id == Conversation.user_id)
        .where(purgeable(days, undo_seconds)).order_by(active_at())).all()


def finish_deletions(seconds: float) -> int:
    """Really delete every conversation deleted more than `seconds` ago, whoever owns it (the
    worker's minute sweep: nobody has to open their sidebar for it)."""
    expired = Conversation.deleted_at < utcnow() - timedelta(seconds=seconds)
    if db.session.scalar(select(Conversation.id).where(expired).limit(1)) is None:
        return 0
    result = db.session.execute(delete(Conversation).where(expired)
                                .execution_options(synchronize_session=False))
    db.session.commit()
    return result.rowcount


def purge_older_than(days: int, undo_seconds: float) -> int:
    """Delete the purgeable conversations; their turns (and all hanging off them) cascade."""
    result = db.session.execute(delete(Conversation).where(purgeable(days, undo_seconds))
                                .execution_options(synchronize_session=False))
    db.session.commit()
    return result.rowcount

