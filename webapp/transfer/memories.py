"""The memories a conversation gave its owner, in and out of an export, with their history.

Exported: every memory that applies to the owner and came from this conversation (the shop's own
shop-wide memories stay with the shop), each with what it said before each change, oldest first. Imported:
the same memories for the importing customer, from the new conversation's turns; a memory about
an order the customer does not have is kept about their account instead.
"""
from sqlalchemy import select

from ..extensions import db
from ..memories.models import Memory, MemoryRevision
from ..memories import ACCOUNT, ORDER, TENANT_WORD, InvalidScope, SessionScope, history_of
from ..models import Conversation, User, utcnow
from ..shop.models import Order
from .schema import MemoryRecord


def from_conversation(conversation: Conversation) -> list[Memory]:
    scope = SessionScope.for_conversation(conversation)
    return list(db.session.scalars(select(Memory).where(
        scope.applies(), Memory.conversation_id == conversation.id,
        ~(Memory.memorable_type.is_(None) & Memory.subject_id.is_(None))).order_by(Memory.id)))


def export_memories(conversation: Conversation) -> list[dict]:
    memories = from_conversation(conversation)
    history = history_of(m.id for m in memories)
    return [{"content": m.content, "source": m.source, **placed(m), "shared": m.shared,
             "turn_seq": m.turn_seq,
             "created_at": m.created_at.isoformat(), "updated_at": m.updated_at.isoformat(),
             "history": [change(r, conversation.id) for r in reversed(history.get(m.id, []))]}
            for m in memories]


def placed(memory: Memory) -> dict:
    """Its scope as a word; a memory about an order that is gone is about the account."""
    if memory.memorable_type != ORDER:
        return {"scope": memory.memorable_type or TENANT_WORD}
    order = db.session.get(Order, memory.memorable_id)
    return {"scope": ORDER, "order_number": order.number} if order else {"scope": ACCOUNT}


def change(row: MemoryRevision, conversation_id: str) -> dict:
    """One revision, who changed it by kind and not by name (as every memory export writes it:
    memories/store/revisions.py); its turn only when that turn is in the same file."""
    return {"action": row.action, "content": row.content, "changed_by": row.changed_by,
            "reason": row.reason,
            "turn_seq": row.turn_seq if row.conversation_id == conversation_id else None,
            "created_at": row.created_at.isoformat()}


def placement(scope: SessionScope, record: MemoryRecord) -> dict:
    try:
        return scope.place(record.scope, not record.shared, record.order_number)
    except InvalidScope:  # not this customer's order (or the order is gone): their account
        return scope.place(ACCOUNT, not record.shared)


def import_memories(records: list[MemoryRecord], conversation: Conversation, user: User,
                    turns: int) -> list[Memory]:
    """Add the file's memories and their history for `user` (the caller commits); vectors are
    left to the import's background embedding."""
    scope, now, memories = SessionScope.for_user(user), utcnow(), []
    for record in records:
        seq = record.turn_seq if record.turn_seq is not None and record.turn_seq < turns else None
        memory = Memory(tenant_id=user.tenant_id, content=record.content, source=record.source,
                        conversation_id=conversation.id, turn_seq=seq,
                        created_at=record.created_at or now,
                        updated_at=record.updated_at or record.created_at or now,
                        **placement(scope, record))
        db.session.add(memory)
        db.session.flush()
        for old in record.history:
            from_here = old.turn_seq is not None and old.turn_seq < turns
            db.session.add(MemoryRevision(
                tenant_id=memory.tenant_id, memory_id=memory.id,
                memorable_type=memory.memorable_type, memorable_id=memory.memorable_id,
                subject_id=memory.subject_id, action=old.action, content=old.content,
                changed_by=old.changed_by, reason=old.reason, conversation_id=conversation.id if from_here else None,
                turn_seq=old.turn_seq if from_here else None, created_at=old.created_at or now))
        memories.append(memory)
    return memories
