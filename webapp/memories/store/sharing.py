"""Opt-out, three states per person: never chose (the configured default applies), shares, doesn't.

The choice gates only what is written from then on; nothing already stored is hidden or removed.
"""
from ...extensions import db
from ...models import utcnow
from ..models import MemorySharing


def sharing_choice(user) -> bool | None:
    """What this person decided; None when they never chose (or are a guest not yet stored)."""
    row = db.session.get(MemorySharing, user.id) if user.id is not None else None
    return None if row is None else row.shares


def shares_memories(user, config) -> bool:
    """Their decision when they made one, else the configured default (which may change later)."""
    choice = sharing_choice(user)
    return bool(config["NIMBUS_MEMORY_SHARING_DEFAULT"]) if choice is None else choice


def set_memory_sharing(user, shares: bool | None) -> None:
    """Record a decision; None forgets it, so the configured default applies again."""
    row = db.session.get(MemorySharing, user.id)
    if shares is None:
        if row is not None:
            db.session.delete(row)
    elif row is None:
        db.session.add(MemorySharing(user_id=user.id, shares=bool(shares)))
    else:
        row.shares, row.decided_at = bool(shares), utcnow()
    db.session.commit()


def describe_choice(user, config) -> str:
    choice = sharing_choice(user)
    if choice is None:
        default = "on" if config["NIMBUS_MEMORY_SHARING_DEFAULT"] else "off"
        return f"never chose (the default applies: {default})"
    return "shares memories" if choice else "does not share memories"
