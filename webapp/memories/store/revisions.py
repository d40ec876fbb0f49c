"""Memory history: a memory that is edited, superseded or merged keeps what it said before.

Every change goes through `keep_old_text` (the store's edits, the distiller's supersessions and
merges) and every deletion through `forget_history`, which takes the memory's history with it and
leaves one row without text, so the consolidation report can still count it.
"""
from dataclasses import dataclass

from sqlalchemy import delete, select

from ...extensions import db
from ..models import Memory, MemoryRevision
from .scopes import scope_label

CHANGERS = ("person", "staff", "distiller", "shell")


@dataclass(frozen=True)
class Changer:
    """Who or what changed a memory, and (for the distiller) the turn whose words did."""
    kind: str
    user_id: int | None = None
    name: str = ""
    conversation_id: str | None = None
    turn_seq: int | None = None

    @classmethod
    def person(cls, user) -> "Changer":
        return cls("staff" if user.is_staff else "person", user.id, user.name or "")


DISTILLER = Changer("distiller", name="the distiller")
SHELL = Changer("shell", name="the command line")


def revision(memory: Memory, action: str, by: Changer, content: str | None,
             reason: str = "") -> MemoryRevision:
    if by.kind not in CHANGERS:
        raise ValueError(f"changed_by must be one of {', '.join(CHANGERS)}")
    return MemoryRevision(
        tenant_id=memory.tenant_id, memory_id=memory.id, memorable_type=memory.memorable_type,
        memorable_id=memory.memorable_id, subject_id=memory.subject_id, action=action,
        content=content, changed_by=by.kind, changed_by_id=by.user_id,
        changed_by_name=by.name[:200], conversation_id=by.conversation_id,
        turn_seq=by.turn_seq, reason=reason[:200])


def keep_old_text(memory: Memory, action: str, by: Changer, old: str, reason: str = "") -> None:
    """Record what `memory` said before this change (the caller commits)."""
    db.session.add(revision(memory, action, by, old, reason))


def forget_history(memory: Memory, by: Changer, reason: str = "deleted") -> None:
    """Before deleting `memory`: drop its history, keep a textless row saying it went."""
    db.session.execute(delete(MemoryRevision).where(MemoryRevision.memory_id == memory.id)
                       .execution_options(synchronize_session=False))
    row = revision(memory, "deleted", by, None, reason)
    row.memory_id = None
    db.session.add(row)


def history_of(memory_ids) -> dict[int, list[MemoryRevision]]:
    """Each memory's earlier texts, newest first (rows ordered by id)."""
    ids = list(memory_ids)
    found: dict[int, list[MemoryRevision]] = {}
    if not ids:
        return found
    for row in db.session.scalars(select(MemoryRevision).where(
            MemoryRevision.memory_id.in_(ids), MemoryRevision.content.is_not(None))
            .order_by(MemoryRevision.id.desc())):
        found.setdefault(row.memory_id, []).append(row)
    return found


def as_record(row: MemoryRevision) -> dict:
    """One history entry as the exports write it: who changed it by kind, not by name."""
    return {"action": row.action, "content": row.content, "changed_by": row.changed_by,
            "reason": row.reason, "conversation_id": row.conversation_id,
            "turn": None if row.turn_seq is None else row.turn_seq + 1,
            "changed_at": row.created_at.isoformat(timespec="seconds")}


def memory_records(memories: list[Memory]) -> list[dict]:
    """Memories with their history, as Download my data and the memory export write them."""
    history = history_of(m.id for m in memories)
    return [{"content": m.content, "scope": scope_label(m), "shared": m.shared,
             "source": m.source, "conversation_id": m.conversation_id,
             "turn": None if m.turn_seq is None else m.turn_seq + 1,
             "created_at": m.created_at.isoformat(timespec="seconds"),
             "updated_at": m.updated_at.isoformat(timespec="seconds"),
             "history": [as_record(row) for row in history.get(m.id, [])]} for m in memories]
