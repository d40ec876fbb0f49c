"""Typed models for accounts, conversations and their turns, stop requests, named locks and job leases."""
import secrets
from datetime import datetime, timezone

from flask_login import UserMixin
from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint, false, true
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .extensions import db


def utcnow() -> datetime:
    """Naive UTC: SQLite drops time zones, so every timestamp is stored as naive UTC."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def new_conversation_id() -> str:
    """128 random bits as 32 hex characters, so nobody can guess another conversation."""
    return secrets.token_hex(16)


class Tenant(db.Model):
    __tablename__ = "tenants"
    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    # Shop-wide defaults an admin sets (webapp/staff/settings.py): strategy, budget, persona…
    settings: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Set with its first shared memory, never cleared: without it, requests skip memory queries.
    shared_memories: Mapped[bool] = mapped_column(default=False, server_default=false())


ROLES = ("customer", "staff", "admin")


def new_session_token() -> str:
    return secrets.token_hex(16)


class User(UserMixin, db.Model):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    is_guest: Mapped[bool] = mapped_column(default=False)
    role: Mapped[str] = mapped_column(String(16), default="customer")  # one of ROLES, in its tenant
    password_hash: Mapped[str | None] = mapped_column(String(200))  # argon2id; None: cannot sign in
    failed_logins: Mapped[int] = mapped_column(default=0)  # since the last success or lock-out
    locked_until: Mapped[datetime | None]
    # Part of the id in the session and remember cookie: changing it signs out every browser.
    session_token: Mapped[str] = mapped_column(String(32), default=new_session_token)
    last_login_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Set with their first personal memory, never cleared (see Tenant.shared_memories).
    personal_memories: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The chat's quiet notes when older turns leave the request (webapp/chat/trim_notes.py).
    trim_notes: Mapped[bool] = mapped_column(default=True, server_default=true())

    tenant: Mapped[Tenant] = relationship()

    def get_id(self) -> str:
        return f"{self.id}:{self.session_token}"

    @property
    def is_staff(self) -> bool:
        """Staff and admins see every conversation of their tenant; guests never are."""
        return not self.is_guest and self.role in ("staff", "admin")

    @property
    def is_admin(self) -> bool:
        return not self.is_guest and self.role == "admin"


class Conversation(db.Model):
    __tablename__ = "conversations"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_conversation_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    title: Mapped[str] = mapped_column(String(200), default="New conversation")
    # Context policy of this conversation; empty settings mean "the configured defaults".
    strategy: Mapped[str] = mapped_column(String(32), default="compact")
    settings: Mapped[dict] = mapped_column(JSON, default=dict)
    turn_count: Mapped[int] = mapped_column(default=0)
    # Sum of every turn's full size: what resending everything would cost, kept in O(1).
    history_tokens: Mapped[int] = mapped_column(default=0)
    # Provider-reported prompt tokens / our estimate, so budgets track the real tokenizer.
    token_ratio: Mapped[float] = mapped_column(default=1.0)
    # Set with its first rolling summary: without one, requests skip the summary lookup.
    has_summary: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The system message an imported conversation came with, sent after the shop's prompt.
    instructions: Mapped[str | None] = mapped_column(Text)
    # Set with its first pinned or left-out turn, never cleared: without it, requests skip the
    # query for marked turns (webapp/context/pins.py).
    has_marks: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    # Set by Delete; the row really goes once the undo window has passed (storage.purge_deleted).
    deleted_at: Mapped[datetime | None]
    # The sidebar's own order: pinned on top (newest pin first); archived under "Archived".
    pinned_at: Mapped[datetime | None]
    archived_at: Mapped[datetime | None]
    # An imported conversation's source ("chatgpt:<its id>", or a digest of its words), so a
    # retried upload skips what its owner has (webapp/transfer/sources.py).
    import_key: Mapped[str | None] = mapped_column(String(100))
    # When it was imported: purge counts its age from here (or its last message, if later), not
    # from the file's dates alone, which may be years old.
    imported_at: Mapped[datetime | None]

    user: Mapped[User] = relationship()
    tenant: Mapped[Tenant] = relationship()
    turns: Mapped[list["Turn"]] = relationship(
        back_populates="conversation", order_by="Turn.seq",
        cascade="all, delete-orphan", passive_deletes=True)


class Turn(db.Model):
    """One user message and everything after it, stored whole in the neutral format."""
    __tablename__ = "turns"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", name="uq_turn_seq"),
        # Covers the viewer's per-turn costs and counts, so summing them never reads the messages.
        Index("ix_turns_costs", "conversation_id", "seq", "outcome", "prompt_tokens",
              "context_tokens", "resend_tokens"),
        Index("ix_turns_outcome", "conversation_id", "outcome", "seq"),  # the few pending ones
        # A person's newest finished turns, read from above an id without their older ones
        # (conversation search, memories/search/conversations.py).
        Index("ix_turns_newest", "conversation_id", "id", "outcome"),
        Index("ix_turns_created", "conversation_id", "created_at"),  # a person's turns on a date
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"))
    # The conversation's person, kept on the turn for the keyword index (memories/search/keyword_index.py),
    # which looks a word up for one person: the database fills it in on insert.
    owner_id: Mapped[int | None]
    seq: Mapped[int]  # 0-based position in the conversation; (conversation_id, seq) is indexed
    messages: Mapped[list] = mapped_column(JSON)
    # Precomputed so context assembly never has to look at older turns' full messages.
    compact: Mapped[list] = mapped_column(JSON)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text, default="")
    full_tokens: Mapped[int] = mapped_column(default=0)
    compact_tokens: Mapped[int] = mapped_column(default=0)
    tool_calls: Mapped[int] = mapped_column(default=0)
    # pending (question stored, agent not finished), answered, api_error, step_limit, interrupted
    outcome: Mapped[str] = mapped_column(String(20), default="pending")
    context_tokens: Mapped[int] = mapped_column(default=0)  # estimated prompt, all model calls
    resend_tokens: Mapped[int] = mapped_column(default=0)  # the same if everything were resent
    prompt_tokens: Mapped[int | None]  # provider-reported, summed over the turn's calls
    completion_tokens: Mapped[int | None]
    trace: Mapped[list] = mapped_column(JSON, default=list)
    # What each model call received, as ids, hashes and fates (webapp/context/manifest.py).
    manifest: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # While pending: renewed every few seconds by the run writing it; when it goes stale the
    # run died (or never started) and any worker takes the turn over.
    heartbeat_at: Mapped[datetime | None] = mapped_column(default=utcnow)
    # Steering from the chat (webapp/context/pins.py): "pinned" (always sent) or "excluded"
    # (never sent); who set it and when, kept so the viewer can say so.
    mark: Mapped[str | None] = mapped_column(String(8))
    marked_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    marked_by_name: Mapped[str] = mapped_column(String(200), default="", server_default="")
    marked_at: Mapped[datetime | None]
    # The owner's verdict on the answer (webapp/chat/feedback_views.py): "up" or "down", with an
    # optional comment on a down; staff read it in the console (/staff/feedback).
    feedback: Mapped[str | None] = mapped_column(String(4))
    feedback_comment: Mapped[str] = mapped_column(String(500), default="", server_default="")
    feedback_at: Mapped[datetime | None]

    conversation: Mapped[Conversation] = relationship(back_populates="turns")


class TurnAlternative(db.Model):
    """A branch of a conversation that is not the one shown and sent: an earlier answer to a
    turn, or an edited-away question with every turn after it (webapp/branches.py). The active
    path stays in `turns`, so whatever reads turns follows the chosen branch by construction."""
    __tablename__ = "turn_alternatives"
    __table_args__ = (UniqueConstraint("conversation_id", "seq", "position", name="uq_alternative"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"))
    seq: Mapped[int]  # the turn where this branch leaves the active path
    # 1-based place among the versions of that turn; the active version holds the free place.
    position: Mapped[int]
    kind: Mapped[str] = mapped_column(String(8))  # "answer" (same question) or "question" (an edit)
    # The branch's turns from `seq` on as stored rows (ids kept), with the alternatives and the
    # summary that belonged to them: switching back restores them as they were.
    branch: Mapped[dict] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RequestText(db.Model):
    """A text a request carried (system prompt, memory block, summary), stored once per
    conversation by its hash, so a turn's manifest can rebuild exactly what was sent."""
    __tablename__ = "request_texts"
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)
    hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class StopRequest(db.Model):
    """Somebody pressed Stop: whichever process is writing the reply sees this row and stops."""
    __tablename__ = "stop_requests"
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Lock(db.Model):
    """A named lock row: inserting it takes the lock, so it works across processes and hosts."""
    __tablename__ = "locks"
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime]


class JobRun(db.Model):
    """A background job that started and has not finished: its lease ends if the worker died,
    and then the job is queued again (the row is deleted when the job ends)."""
    __tablename__ = "job_runs"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)  # job name + arguments
    name: Mapped[str] = mapped_column(String(100))
    arguments: Mapped[list] = mapped_column(JSON)
    owner: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(default=1)
    lease_until: Mapped[datetime] = mapped_column(index=True)


class Import(db.Model):
    """An upload at /import, parsed and stored by a background job: its progress while it runs,
    then what it stored and skipped (the page reads both). The file waits in the instance folder
    until the job ends, done or failed."""
    __tablename__ = "imports"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_conversation_id)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)  # who uploaded
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))  # into whose account
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(10), default="queued")  # queued|running|done|failed
    options: Mapped[dict] = mapped_column(JSON, default=dict)  # format, strict, distil, files
    total: Mapped[int] = mapped_column(default=0)  # conversations in the files (0: not known yet)
    checked: Mapped[int] = mapped_column(default=0)  # conversations checked so far
    stored: Mapped[int] = mapped_column(default=0)  # conversations written (committed) so far
    result: Mapped[dict | None] = mapped_column(JSON)  # the page's summary, once done
    error: Mapped[str] = mapped_column(Text, default="", server_default="")  # why it failed
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)  # its job's last sign of life
    finished_at: Mapped[datetime | None]


class AuditEntry(db.Model):
    """Who did what, when: staff opening a customer's conversation, deletions. Never content."""
    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    # A keyed digest of the actor's email, never the email: the log shows the email through actor_id
    # while the account exists, and the digest confirms "was it X?" once the account is deleted.
    actor_digest: Mapped[str] = mapped_column(String(16), default="", server_default="")
    action: Mapped[str] = mapped_column(String(40))
    # What it was about; a deleted customer or conversation leaves NULL behind, not their id.
    customer_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL"))
    detail: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ShareLink(db.Model):
    """A read-only link to one conversation's viewer for somebody without an account."""
    __tablename__ = "share_links"
    id: Mapped[int] = mapped_column(primary_key=True)
    # Signed into the link with the id: a reused id (SQLite) never revives an old link.
    key: Mapped[str] = mapped_column(String(32), default=new_session_token)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]
    # Staff chose to show the shop-wide memories' text; personal memories are never shown.
    include_shared_memories: Mapped[bool] = mapped_column(default=False, server_default=false())

    conversation: Mapped[Conversation] = relationship()
    creator: Mapped[User | None] = relationship()


Index("ix_conversations_user_updated", Conversation.user_id, Conversation.updated_at)
Index("ix_conversations_tenant_updated", Conversation.tenant_id, Conversation.updated_at)
# A person's conversations: with tenant and person both bound, SQLite (without statistics) would
# otherwise walk every conversation of the tenant through ix_conversations_tenant_id.
Index("ix_conversations_tenant_user", Conversation.tenant_id, Conversation.user_id)
Index("ix_conversations_import_key", Conversation.user_id, Conversation.import_key)  # retried imports
# The sidebar's pinned and archived sections, read a page at a time as its recent one is read
# through ix_conversations_user_updated; and its check for deletions past their undo window.
Index("ix_conversations_user_pinned", Conversation.user_id, Conversation.pinned_at, Conversation.id)
Index("ix_conversations_user_archived", Conversation.user_id, Conversation.archived_at,
      Conversation.id)
Index("ix_conversations_user_deleted", Conversation.user_id, Conversation.deleted_at)
Index("ix_audit_log_tenant_id_id", AuditEntry.tenant_id, AuditEntry.id)
Index("ix_turns_outcome_heartbeat", Turn.outcome, Turn.heartbeat_at)
Index("ix_turns_marked", Turn.conversation_id, Turn.mark, Turn.seq)
Index("ix_turns_feedback_at", Turn.feedback_at)  # the console's newest feedback first
