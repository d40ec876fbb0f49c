"""Imported history is distilled into memories only when the person chose it at import."""
from sqlalchemy import insert

from ...extensions import db
from ...models import utcnow
from ..models import DistillCheckpoint

NOT_CHOSEN = "imported: not distilled (not chosen at import)"


def leave_undistilled(conversations) -> None:
    """Mark the imported turns as read, so neither the sweep nor a later fold distils them;
    turns added afterwards in Nimbus are distilled as usual. The conversations are new, so their
    checkpoints are inserted at once (one merge each read the table 10,000 times)."""
    now = utcnow()
    rows = [{"conversation_id": c.id, "distilled_through_seq": c.turn_count - 1,
             "distilled_at": now, "last_outcome": NOT_CHOSEN} for c in conversations]
    if rows:
        db.session.execute(insert(DistillCheckpoint), rows)
    db.session.commit()
