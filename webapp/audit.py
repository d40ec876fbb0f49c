"""The audit log: who did what to which conversation, when. It records acts, never content."""
from sqlalchemy import select

from .extensions import db
from .models import AuditEntry, User


def record(actor, action: str, *, conversation=None, customer=None, tenant_id=None,
           detail: str = "", commit: bool = True) -> AuditEntry:
    """Write one entry; `customer` defaults to the conversation's owner."""
    customer_id = customer.id if customer is not None else (
        conversation.user_id if conversation is not None else None)
    entry = AuditEntry(
        tenant_id=tenant_id or (actor.tenant_id if actor else conversation.tenant_id),
        actor_id=actor.id if actor is not None else None,
        actor_email=actor.email if actor is not None else "",
        action=action, customer_id=customer_id,
        conversation_id=conversation.id if conversation is not None else None,
        detail=detail[:500])
    db.session.add(entry)
    if commit:
        db.session.commit()
    return entry


def entries(tenant_id: int, before_id: int | None, limit: int) -> list[tuple]:
    """(entry, customer) newest first, a page at a time through (tenant_id, id)."""
    query = (select(AuditEntry, User).outerjoin(User, User.id == AuditEntry.customer_id)
             .where(AuditEntry.tenant_id == tenant_id))
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    return list(db.session.execute(query.order_by(AuditEntry.id.desc()).limit(limit)))
