"""The tenant's newest answer feedback, for the console: thumbs, comments, whose and where."""
from sqlalchemy import select

from ..extensions import db
from ..models import Conversation, Turn, User


def recent_feedback(tenant_id: int, limit: int) -> list[tuple[Turn, Conversation, User]]:
    """Rated answers of the tenant's live conversations, newest rating first (ix_turns_feedback_at)."""
    return list(db.session.execute(
        select(Turn, Conversation, User)
        .join(Conversation, Conversation.id == Turn.conversation_id)
        .join(User, User.id == Conversation.user_id)
        .where(Conversation.tenant_id == tenant_id, Conversation.deleted_at.is_(None),
               Turn.feedback.is_not(None))
        .order_by(Turn.feedback_at.desc(), Turn.id.desc())
        .limit(limit)))
