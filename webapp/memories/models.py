"""Tables of long-term memory: memories on three axes, their history, distiller checkpoints,
sharing choices.

Retention: purging a conversation keeps the memories it produced; their provenance link is set to
NULL (ON DELETE SET NULL) and the panel says "from a deleted conversation".
"""
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import db
from ..models import utcnow

SOURCES = ("distilled", "tool", "hand")  # the distiller, the save_memory tool, added by hand


class Memory(db.Model):
    """One remembered fact: whose (tenant), about what (memorable), for whom (subject)."""
    __tablename__ = "memories"
    __table_args__ = (
        CheckConstraint("(memorable_type IS NULL) = (memorable_id IS NULL)",
                        name="ck_memory_memorable_pair"),
        Index("ix_memories_tenant_id_id", "tenant_id", "id"),
        # A session's memories, one (memorable, subject) pair at a time, newest first (scopes.py).
        Index("ix_memories_scope", "tenant_id", "memorable_type", "memorable_id", "subject_id",
              "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    # Whose data it is at all: never NULL, always filled in from the session.
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"),
                                           nullable=False)
    # What it is about: ("account", user id) or ("order", order id); NULL = the tenant as a whole.
    memorable_type: Mapped[str | None] = mapped_column(String(20))
    memorable_id: Mapped[int | None]
    # Who it applies to: a person; NULL = everyone in that scope.
    subject_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                                   index=True)
    content: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(10))
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL"), index=True)
    turn_seq: Mapped[int | None]
    # "left": learned on a branch the person then left (webapp/branches.py), not yet kept or
    # dropped from the panel; "kept": kept all the same; "": its turns are on the path shown.
    branch_left: Mapped[str] = mapped_column(String(4), default="", server_default="")
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)  # float32, L2-normalised
    embedding_model: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __init__(self, *, tenant_id: int, content: str, source: str, **fields):
        """A memory cannot be built without its tenant: the one axis that must always be right."""
        if not isinstance(tenant_id, int):
            raise ValueError("a memory needs the tenant it belongs to")
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}")
        super().__init__(tenant_id=tenant_id, content=content, source=source, **fields)

    @property
    def shared(self) -> bool:
        return self.subject_id is None


REVISION_ACTIONS = ("edited", "superseded", "merged", "deleted")


class MemoryRevision(db.Model):
    """What a memory said before it changed, who or what changed it, when and from which turn.

    A deleted memory leaves only a row without text (what, where and when for the consolidation
    report): deleting a memory takes its history with it.
    """
    __tablename__ = "memory_revisions"
    __table_args__ = (Index("ix_memory_revisions_tenant_created", "tenant_id", "created_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"),
                                           nullable=False)
    memory_id: Mapped[int | None] = mapped_column(
        ForeignKey("memories.id", ondelete="CASCADE"), index=True)
    # The memory's place when it changed, so the report groups by scope after a deletion too.
    memorable_type: Mapped[str | None] = mapped_column(String(20))
    memorable_id: Mapped[int | None]
    subject_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                                   index=True)
    action: Mapped[str] = mapped_column(String(12))
    content: Mapped[str | None] = mapped_column(Text)  # the old text; None once deleted
    changed_by: Mapped[str] = mapped_column(String(10))  # person, staff, distiller
    changed_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    changed_by_name: Mapped[str] = mapped_column(String(200), default="")
    conversation_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("conversations.id", ondelete="SET NULL"))
    turn_seq: Mapped[int | None]  # the turn whose words changed it
    reason: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def shared(self) -> bool:
        return self.subject_id is None


class DistillCheckpoint(db.Model):
    """How far the distiller has read a conversation, so no window is ever paid for twice."""
    __tablename__ = "memory_checkpoints"
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)
    distilled_through_seq: Mapped[int] = mapped_column(default=-1)
    distilled_at: Mapped[datetime | None]
    last_outcome: Mapped[str] = mapped_column(String(200), default="")
    # Reads of the window after the checkpoint that were cut off or refused for size: the next
    # waits until retry_after (doubling) and reads less; NIMBUS_MEMORY_MAX_TRIES gives it up.
    failed_tries: Mapped[int] = mapped_column(default=0, server_default="0")
    retry_after: Mapped[datetime | None]
    # The last window given up, and why ("turns 3–9 after 3 cut or refused reads: …"): kept.
    given_up: Mapped[str] = mapped_column(String(300), default="", server_default="")


class MemorySharing(db.Model):
    """A person's decision about memory; no row means they never chose and the default applies."""
    __tablename__ = "memory_sharing"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    shares: Mapped[bool]
    decided_at: Mapped[datetime] = mapped_column(default=utcnow)


class TurnVector(db.Model):
    """The embedding of one turn's question and answer, for conversation search."""
    __tablename__ = "turn_vectors"
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"),
                                         primary_key=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    embedding_model: Mapped[str] = mapped_column(String(80))
