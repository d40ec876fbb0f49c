"""Imported history is distilled into memories only when the person chose it at import."""
from ..extensions import db
from ..models import utcnow
from .models import DistillCheckpoint

NOT_CHOSEN = "imported: not distilled (not chosen at import)"


def leave_undistilled(conversations) -> None:
    """Mark the imported turns as read, so neither the sweep nor a later fold distils them;
    turns added afterwards in Nimbus are distilled as usual."""
    for conversation in conversations:
        db.session.merge(DistillCheckpoint(
            conversation_id=conversation.id, distilled_through_seq=conversation.turn_count - 1,
            distilled_at=utcnow(), last_outcome=NOT_CHOSEN))
    db.session.commit()
