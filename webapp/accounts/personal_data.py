"""A person's data rights: everything about them as one JSON document, and deleting all of it.

Deleting runs as one transaction: their conversations (turns, summaries, checkpoints, vectors,
share links and keyword-index rows go with them), every memory about them or from their
conversations with its history (the earlier texts), orders, tickets, choices and the account itself. A shop-wide memory among them
was sent to other customers too: its words are blanked in the record of what their model calls
received (the viewer's "as sent"), so nothing of it outlives the account. The audit log keeps one entry
that says what was deleted and how much, with a keyed digest of the email instead of the email.
"""
from sqlalchemy import and_, delete, func, or_, select, update

from ..plurals import plural
from ..extensions import db
from ..memories.models import Memory, MemoryRevision
from ..memories import ACCOUNT, ORDER, memory_records, sharing_choice
from ..models import Conversation, RequestText, Turn, User, utcnow
from ..shop.models import Order, Ticket
from ..transfer import export_conversation

FORMAT = "nimbus.personal-data"
REDACTED = "[deleted with its customer's data]"


def their_memories(user: User, conversation_ids):
    """Memories for them, about their account or orders, or distilled from their conversations."""
    order_ids = select(Order.id).where(Order.customer_id == user.id)
    return and_(Memory.tenant_id == user.tenant_id, or_(
        Memory.subject_id == user.id,
        and_(Memory.memorable_type == ACCOUNT, Memory.memorable_id == user.id),
        and_(Memory.memorable_type == ORDER, Memory.memorable_id.in_(order_ids)),
        Memory.conversation_id.in_(conversation_ids)))


def their_revisions(user: User, conversation_ids):
    """The history rows of their memories: the earlier texts and the records of deletions."""
    order_ids = select(Order.id).where(Order.customer_id == user.id)
    return and_(MemoryRevision.tenant_id == user.tenant_id, or_(
        MemoryRevision.subject_id == user.id,
        and_(MemoryRevision.memorable_type == ACCOUNT, MemoryRevision.memorable_id == user.id),
        and_(MemoryRevision.memorable_type == ORDER, MemoryRevision.memorable_id.in_(order_ids)),
        MemoryRevision.conversation_id.in_(conversation_ids),
        MemoryRevision.memory_id.in_(select(Memory.id).where(their_memories(user, conversation_ids)))))


def export_user_data(user: User) -> dict:
    """Everything stored about this person, in one JSON-ready document."""
    conversations = db.session.scalars(select(Conversation).where(Conversation.user_id == user.id)
                                       .order_by(Conversation.created_at))
    ids = select(Conversation.id).where(Conversation.user_id == user.id)
    memories = list(db.session.scalars(select(Memory).where(their_memories(user, ids))
                                       .order_by(Memory.id)))
    orders = db.session.scalars(select(Order).where(Order.customer_id == user.id).order_by(Order.number))
    tickets = db.session.scalars(select(Ticket).where(Ticket.customer_id == user.id).order_by(Ticket.id))
    return {
        "format": FORMAT, "version": 2, "exported_at": utcnow().isoformat(timespec="seconds"),
        "account": {"email": user.email, "name": user.name, "role": user.role,
                    "guest": user.is_guest, "shop": user.tenant.name,
                    # None for a guest whose browser has only read pages: nothing is stored yet
                    "created_at": user.created_at and user.created_at.isoformat(timespec="seconds"),
                    "memory_sharing": sharing_choice(user)},
        "conversations": [export_conversation(c) for c in conversations],
        "memories": memory_records(memories),
        "orders": [{"number": o.number, "item": o.item, "amount_cents": o.amount_cents,
                    "status": o.status, "purchased_at": o.purchased_at.isoformat(timespec="seconds")}
                   for o in orders],
        "tickets": [{"number": t.number, "category": t.category, "summary": t.summary,
                     "status": t.status, "created_at": t.created_at.isoformat(timespec="seconds")}
                    for t in tickets],
    }


def blank_in_others_prompts(tenant_id: int, user_id: int, contents: list[str]) -> int:
    """Replace each shared memory's words in the stored prompt texts of the shop's other
    conversations; how many texts changed."""
    others = select(Conversation.id).where(Conversation.tenant_id == tenant_id,
                                           Conversation.user_id != user_id)
    changed = 0
    for content in contents:
        changed += db.session.execute(
            update(RequestText).where(RequestText.conversation_id.in_(others),
                                      RequestText.text.contains(content, autoescape=True))
            .values(text=func.replace(RequestText.text, content, REDACTED))
            .execution_options(synchronize_session=False)).rowcount
    return changed


def delete_user_data(user: User, requested_by: str) -> dict:
    """Delete the person and everything about them in one transaction; return what went."""
    from ..audit import email_digest, record
    ids = select(Conversation.id).where(Conversation.user_id == user.id)
    shared = db.session.scalars(select(Memory.content).distinct()
                                .where(their_memories(user, ids), Memory.subject_id.is_(None))).all()
    shared += db.session.scalars(select(MemoryRevision.content).distinct().where(
        their_revisions(user, ids), MemoryRevision.subject_id.is_(None),
        MemoryRevision.content.is_not(None))).all()  # earlier texts were sent to others too
    counts = {
        "redacted_texts": blank_in_others_prompts(user.tenant_id, user.id, shared),
        "conversations": db.session.scalar(select(func.count()).select_from(ids.subquery())),
        "turns": db.session.scalar(select(func.count()).where(Turn.conversation_id.in_(ids))),
        "memory_revisions": db.session.execute(
            delete(MemoryRevision).where(their_revisions(user, ids))
            .execution_options(synchronize_session=False)).rowcount,
        "memories": db.session.execute(
            delete(Memory).where(their_memories(user, ids))
            .execution_options(synchronize_session=False)).rowcount,
    }
    tenant_id, digest = user.tenant_id, email_digest(user.email)
    db.session.execute(delete(Conversation).where(Conversation.user_id == user.id)
                       .execution_options(synchronize_session=False))
    db.session.execute(delete(User).where(User.id == user.id))  # orders, tickets, choices cascade
    record(None, "deleted customer data", tenant_id=tenant_id, commit=False,
           detail=(f"requested by {requested_by}; {plural(counts['conversations'], 'conversation')}, "
                   f"{plural(counts['turns'], 'turn')}, {plural(counts['memories'], 'memory')}, "
                   f"{plural(counts['redacted_texts'], 'prompt text')} of others blanked; "
                   f"email digest {digest}"))
    db.session.commit()
    from ..memories import forget_deleted_words
    forget_deleted_words()
    return counts
