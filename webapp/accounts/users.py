"""Tenants and users: the demo shop, its customers, and a guest for each new browser."""
import secrets

from sqlalchemy import select

from ..extensions import db
from ..models import Tenant, User
from ..shop import DEMO_CUSTOMERS, give_demo_orders, seed_help_center


def get_or_create_tenant(slug: str, name: str | None = None) -> Tenant:
    tenant = db.session.scalar(select(Tenant).where(Tenant.slug == slug))
    if tenant is None:
        tenant = Tenant(slug=slug, name=name or slug.title())
        db.session.add(tenant)
        db.session.flush()
    return tenant


def get_or_create_user(tenant: Tenant, email: str, name: str, is_guest=False) -> User:
    user = db.session.scalar(select(User).where(User.email == email))
    if user is None:
        user = User(tenant_id=tenant.id, email=email, name=name, is_guest=is_guest)
        db.session.add(user)
        db.session.flush()
    return user


def seed_demo(tenant_slug: str) -> Tenant:
    """Create (or top up) the demo shop; safe to run any number of times."""
    tenant = get_or_create_tenant(tenant_slug, "Nimbus Demo Shop")
    seed_help_center(tenant.id)
    for email, name in DEMO_CUSTOMERS:
        give_demo_orders(get_or_create_user(tenant, email, name))
    db.session.commit()
    return tenant


def create_guest(tenant_slug: str, token: str | None = None) -> User:
    """A browser's own customer, with the demo orders so the refund scenario works for everyone;
    `token` names it (the one its pages showed before it was stored)."""
    tenant = seed_demo(tenant_slug)
    token = token or secrets.token_hex(6)
    guest = get_or_create_user(tenant, f"guest-{token}@guests.invalid", f"Guest {token[:4]}",
                               is_guest=True)
    give_demo_orders(guest)
    db.session.commit()
    return guest


def idle_guests(days: int, purged=None):
    """Guests older than `days` with no conversation left (besides those `purged` removes)."""
    from datetime import timedelta

    from sqlalchemy import exists

    from ..models import Conversation, utcnow
    kept = Conversation.user_id == User.id
    if purged is not None:
        kept = kept & ~purged
    return (User.is_guest.is_(True), User.created_at < utcnow() - timedelta(days=days),
            ~exists().where(kept))


def purge_idle_guests(days: int) -> int:
    """Delete guests older than `days` with no conversation left: every first visit makes one."""
    from sqlalchemy import delete
    result = db.session.execute(delete(User).where(*idle_guests(days)))
    db.session.commit()
    return result.rowcount
