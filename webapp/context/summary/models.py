"""The rolling summary's table: one row per conversation and summary style."""
from datetime import datetime

from sqlalchemy import ForeignKey, JSON, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ...extensions import db
from ...models import utcnow


class ConversationSummary(db.Model):
    """One rolling summary per conversation and style, covering turns up to through_seq."""
    __tablename__ = "conversation_summaries"
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)
    style: Mapped[str] = mapped_column(String(16), primary_key=True)
    text: Mapped[str] = mapped_column(Text, default="")
    through_seq: Mapped[int] = mapped_column(default=-1)  # -1: covers nothing yet
    topics: Mapped[list] = mapped_column(JSON, default=list)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # A hand edit (summary_edits.py): kept, and the next fold continues from it.
    edited_at: Mapped[datetime | None]
    edited_by_name: Mapped[str] = mapped_column(String(200), default="", server_default="")
    # The last fold that failed (the text above stayed as it was): a provider error (jobs.py)
    # or an output the check refused (section.py); cleared by the next success.
    failed_at: Mapped[datetime | None]
    failure: Mapped[str] = mapped_column(String(300), default="", server_default="")

    @property
    def retried_soon(self) -> bool:
        """A provider error is retried by the queue in seconds; a refused output waits for the
        next reply (the same turns would likely be summarized the same way)."""
        return not self.failure.startswith(REFUSED)


REFUSED = "the check refused"  # how a failure by the check (fold.check) begins
