"""The memory export: every memory that applies to a person, each with its history, as JSON."""
from sqlalchemy import select

from ...extensions import db
from ...models import utcnow
from ..models import Memory
from .revisions import memory_records
from .scopes import SessionScope

FORMAT = "nimbus.memories"


def export_memories(user) -> dict:
    """What the memory panel shows the person, oldest first, with every earlier text."""
    memories = list(db.session.scalars(select(Memory).where(SessionScope.for_user(user).applies())
                                       .order_by(Memory.id)))
    return {"format": FORMAT, "version": 1, "exported_at": utcnow().isoformat(timespec="seconds"),
            "memories": memory_records(memories)}
