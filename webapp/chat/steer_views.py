"""Steering the context from a turn: pin it (always sent) or leave it out (never sent), and undo.

The owner may, and an admin of the shop (audited); the chat swaps the turn's controls in place,
the viewer's plain form comes back to the viewer at that turn.
"""
from flask import g, redirect, render_template, request, url_for

from .. import access
from ..extensions import db, htmx
from ..context import MarkError, set_mark, cached_summary
from ..audit import record
from ..security import safe_next
from .views import bp, get_turn_or_404, refusal

ACTIONS = {"pinned": "pinned turn", "excluded": "left out turn", None: "cleared turn mark"}


def words_may_remain(turn) -> bool:
    """A left-out turn inside the summary's reach: folded before it was left out, its words may
    still be in the summary, which the person can edit."""
    if turn.mark != "excluded" or not turn.conversation.has_summary:
        return False
    summary = cached_summary(turn.conversation)  # from the identity map after the first turn
    return bool(summary and summary.through_seq >= turn.seq)


def init_app(app) -> None:
    app.jinja_env.globals["words_may_remain"] = words_may_remain


@bp.post("/c/<conversation_id>/turns/<int:seq>/mark")
def mark_turn(conversation_id, seq):
    """Pin a turn, leave it out of the context, or clear either (mark=none)."""
    conversation = access.get_conversation_or_404(conversation_id, access.APPLY)
    turn = get_turn_or_404(conversation, seq)
    mark = request.form.get("mark", "")
    mark = None if mark in ("", "none") else mark
    try:
        set_mark(turn, mark, g.user)
    except MarkError as problem:
        return refusal(str(problem), 422)
    if conversation.user_id != g.user.id:
        record(g.user, ACTIONS[mark], conversation=conversation, detail=f"turn {seq + 1}",
               commit=False)
    db.session.commit()
    if htmx:
        return render_template("chat/_turn_steer.html", turn=turn)
    back = safe_next(request.form.get("next")) or url_for("viewer.show",
                                                          conversation_id=conversation.id)
    return redirect(f"{back}#turn-{seq + 1}", 303)


@bp.post("/account/trim-notes")
def set_trim_notes():
    """Show or hide the chat's notes where older turns leave the request (show=1 or 0)."""
    g.user.trim_notes = request.form.get("show") == "1"
    db.session.commit()
    if htmx:
        return "", 200, {"HX-Refresh": "true"}
    return redirect(url_for("personal_data.show_account") + "#context-settings", 303)
