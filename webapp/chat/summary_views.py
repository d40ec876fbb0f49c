"""The rolling summary from the chat: read it, fix it by hand, fold everything up to a turn now.

A hand edit is kept and marked, and the next fold continues from it; "Summarize up to here"
queues the fold job (webapp/context/summary/jobs.py) and the page follows its progress.
"""
from flask import current_app, g, redirect, render_template, request, url_for
from sqlalchemy import select

from .. import access
from ..extensions import db, htmx
from ..jobs import enqueue
from ..context import SUMMARY_STRATEGIES, cached_summary, style_of, RETRY_DELAY, fold_summary
from ..models import Turn, utcnow
from ..audit import record
from .views import bp, get_turn_or_404, refusal

MAX_SUMMARY_CHARS = 10_000


def summary_context(conversation) -> dict:
    summary = cached_summary(conversation, style_of(conversation, current_app.config))
    asked = (conversation.settings or {}).get("summarize_through", -1)
    covered = summary.through_seq if summary else -1
    return {"conversation": conversation, "summary": summary, "asked": asked,
            "folding": asked > covered and conversation.strategy in SUMMARY_STRATEGIES,
            "uses_summary": conversation.strategy in SUMMARY_STRATEGIES,
            "retry_seconds": RETRY_DELAY, "max_chars": MAX_SUMMARY_CHARS,
            "may_change": access.may(g.user, access.APPLY, conversation),
            "left_out": left_out_covered(conversation, covered)}


def left_out_covered(conversation, covered: int) -> list:
    """(seq, question) of the left-out turns within the summary's reach: their words may be in
    it, from a fold before they were left out."""
    if covered < 0 or not conversation.has_marks:
        return []
    return db.session.execute(select(Turn.seq, Turn.question).where(
        Turn.conversation_id == conversation.id, Turn.mark == "excluded",
        Turn.seq <= covered).order_by(Turn.seq)).all()


def audit(conversation, action: str, detail: str = "") -> None:
    if conversation.user_id != g.user.id:
        record(g.user, action, conversation=conversation, detail=detail, commit=False)


@bp.get("/c/<conversation_id>/summary")
def show_summary(conversation_id):
    """Show the conversation's rolling summary: what it covers, a hand edit, a failed fold."""
    conversation = access.get_conversation_or_404(conversation_id, access.READ)
    template = "chat/_summary.html" if htmx else "chat/summary.html"
    return render_template(template, **summary_context(conversation))


@bp.post("/c/<conversation_id>/summary")
def edit_summary(conversation_id):
    """Replace the summary's text by hand; the next fold continues from it."""
    conversation = access.get_conversation_or_404(conversation_id, access.APPLY)
    summary = cached_summary(conversation, style_of(conversation, current_app.config))
    text = (request.form.get("text") or "").replace("\r\n", "\n").strip()
    if summary is None or summary.through_seq < 0:
        return refusal("There is no summary to edit yet: it starts once turns leave the window.", 422)
    if not text:
        return refusal("A summary cannot be empty; to start over, leave turns out instead.", 422)
    if len(text) > MAX_SUMMARY_CHARS:
        return refusal(f"A summary can be at most {MAX_SUMMARY_CHARS:,} characters long.", 422)
    summary.text, summary.edited_at = text, utcnow()
    summary.edited_by_name = g.user.name or g.user.email
    audit(conversation, "edited summary")
    db.session.commit()
    if htmx:
        return render_template("chat/_summary.html", **summary_context(conversation),
                               saved=True)
    return redirect(url_for(".show_summary", conversation_id=conversation.id), 303)


@bp.post("/c/<conversation_id>/turns/<int:seq>/summarize")
def summarize_up_to(conversation_id, seq):
    """Fold every turn up to this one into the summary now, in the background."""
    conversation = access.get_conversation_or_404(conversation_id, access.APPLY)
    turn = get_turn_or_404(conversation, seq)
    if conversation.strategy not in SUMMARY_STRATEGIES:
        return refusal(f"This conversation's strategy ({conversation.strategy}) sends no summary; "
                       "choose compact or hybrid in the viewer first.", 422)
    if turn.outcome == "pending":
        return refusal("This turn is still being answered.", 422)
    settings = dict(conversation.settings or {})
    settings["summarize_through"] = max(settings.get("summarize_through", -1), seq)
    conversation.settings = settings
    audit(conversation, "summarized up to", f"turn {seq + 1}")
    db.session.commit()
    enqueue(fold_summary, conversation.id)
    return redirect(url_for(".show_summary", conversation_id=conversation.id), 303)




def stored_summary(conversation):
    """The conversation's summary row, for the viewer's notices; None without one."""
    return cached_summary(conversation) if getattr(conversation, "has_summary", False) else None


@bp.record_once
def register_globals(state) -> None:
    state.app.jinja_env.globals.update(summary_of=stored_summary,
                                       summary_retry_seconds=RETRY_DELAY)
