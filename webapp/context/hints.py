"""Hints on rows a request loads anyway, so assembly skips lookups that would find nothing.

The first shared memory marks its tenant, the first personal one its person, the first rolling
summary its conversation. A hint is only ever set, never cleared: at worst a lookup finds nothing.
"""
from sqlalchemy import event, inspect, update
from sqlalchemy.orm import object_session
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key

from ..models import Conversation, Tenant, User
from ..memories.models import Memory
from .summary.models import ConversationSummary


def mark(connection, target, model, row_id, column: str) -> None:
    """Set the hint in the database and on the row this session holds, if it holds it."""
    table_column = getattr(model, column)
    connection.execute(update(model).where(model.id == row_id, table_column.is_(False))
                       .values({column: True}))
    session = object_session(target)
    held = session.identity_map.get(identity_key(model, row_id)) if session else None
    if held is not None:
        set_committed_value(held, column, True)


def mark_memory_holder(mapper, connection, memory) -> None:
    if memory.subject_id is None:
        mark(connection, memory, Tenant, memory.tenant_id, "shared_memories")
    else:
        mark(connection, memory, User, memory.subject_id, "personal_memories")


def mark_new_holder(mapper, connection, memory) -> None:
    """A memory moved to another person or made shared marks where it now belongs."""
    state = inspect(memory)
    if any(state.attrs[name].history.has_changes() for name in ("subject_id", "tenant_id")):
        mark_memory_holder(mapper, connection, memory)


def mark_summarized(mapper, connection, summary) -> None:
    mark(connection, summary, Conversation, summary.conversation_id, "has_summary")


def memories_may_apply(conversation) -> bool:
    """False only when no memory can apply: none shared in the tenant, none of this person's."""
    return bool(conversation.tenant.shared_memories or conversation.user.personal_memories)


LISTENERS = ((Memory, "after_insert", mark_memory_holder),
             (Memory, "after_update", mark_new_holder),
             (ConversationSummary, "after_insert", mark_summarized))


def listen() -> None:
    """Keep the request hints true as memories and summaries are written (once per process)."""
    for target, name, listener in LISTENERS:
        if not event.contains(target, name, listener):
            event.listen(target, name, listener)
