"""Thumbs up or down on an answer, with an optional comment on a down: kept with the turn for staff.

Only the conversation's owner gives feedback (anyone else gets the usual 404); the chat swaps the
turn's feedback controls in place, a plain form post comes back to the answer.
"""
from flask import redirect, render_template, request, url_for

from ..extensions import db, htmx
from ..models import utcnow
from .views import bp, get_conversation_or_404, get_turn_or_404, refusal

RATINGS = {"up", "down"}
COMMENT_CHARS = 500  # the column's size (turns.feedback_comment)


@bp.post("/c/<conversation_id>/turns/<int:seq>/feedback")
def give_feedback(conversation_id, seq):
    """Rate an answer up or down (rating=none takes it back); a down may carry a short comment."""
    conversation = get_conversation_or_404(conversation_id)
    turn = get_turn_or_404(conversation, seq)
    if turn.outcome == "pending":
        return refusal("This answer is still being written; rate it once it is finished.", 409)
    rating = request.form.get("rating", "")
    comment = " ".join(request.form.get("comment", "").split())
    if rating not in RATINGS | {"none"}:
        return refusal("Feedback is a thumbs up or a thumbs down.", 422)
    if len(comment) > COMMENT_CHARS:
        return refusal(f"Please keep the comment under {COMMENT_CHARS} characters.", 422)
    turn.feedback = None if rating == "none" else rating
    turn.feedback_comment = comment if rating == "down" else ""
    turn.feedback_at = None if rating == "none" else utcnow()
    db.session.commit()
    if htmx:
        return render_template("chat/_feedback.html", turn=turn, thanked=True,
                               asking=rating == "down" and "comment" not in request.form)
    return redirect(url_for("chat.show_conversation", conversation_id=conversation.id)
                    + f"#turn-{seq + 1}-answer", 303)
