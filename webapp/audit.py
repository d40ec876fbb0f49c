"""The audit log: who did what to which conversation, when. It records acts, never content, and
names its actors by a keyed digest of their email, so a deleted account leaves no email behind."""
import hashlib
import hmac

from flask import current_app
from sqlalchemy import select
from sqlalchemy.orm import aliased

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
        actor_digest=email_digest(actor.email) if actor is not None else "",
        action=action, customer_id=customer_id,
        conversation_id=conversation.id if conversation is not None else None,
        detail=detail[:500])
    db.session.add(entry)
    if commit:
        db.session.commit()
    return entry


def email_digest(email: str) -> str:
    """Lets an admin confirm 'was it X?' without the log holding X."""
    key = str(current_app.secret_key).encode()
    return hmac.new(key, email.encode(), hashlib.sha256).hexdigest()[:16]


def entries(tenant_id: int, before_id: int | None, limit: int) -> list[tuple]:
    """(entry, customer, actor) newest first, a page at a time through (tenant_id, id); a deleted
    customer or actor is None."""
    actor = aliased(User)
    query = (select(AuditEntry, User, actor).outerjoin(User, User.id == AuditEntry.customer_id)
             .outerjoin(actor, actor.id == AuditEntry.actor_id)
             .where(AuditEntry.tenant_id == tenant_id))
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    return list(db.session.execute(query.order_by(AuditEntry.id.desc()).limit(limit)))
