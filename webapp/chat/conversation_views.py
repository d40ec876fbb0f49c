"""The sidebar's actions on one conversation: rename inline, delete, and undo a delete."""
from urllib.parse import unquote, urlsplit

from flask import g, render_template, request, url_for
from flask_htmx import make_response as htmx_response

from .. import storage
from ..extensions import db, htmx
from ..security import NUL_MESSAGE, UTF8_MESSAGE, has_nul
from .sidebar import sidebar
from .views import bp, get_conversation_or_404, refusal

TITLE_MAX_CHARS = 200  # the title column's length


@bp.get("/c/<conversation_id>/rename")
def edit_title(conversation_id):
    """The sidebar item as a small form to type the new name into (Escape cancels)."""
    conversation = get_conversation_or_404(conversation_id)
    return render_template("chat/_rename_form.html", item=conversation)


@bp.get("/c/<conversation_id>/item")
def show_item(conversation_id):
    """The sidebar item as it was: what Cancel on the rename form puts back."""
    conversation = get_conversation_or_404(conversation_id)
    return render_template("chat/_conversation_item.html", item=conversation,
                           open_id=open_conversation_id(), focus="rename")


@bp.patch("/c/<conversation_id>")
def rename_conversation(conversation_id):
    """Rename a conversation with the title typed into the inline form."""
    conversation = get_conversation_or_404(conversation_id)
    title = request.form.get("title") or htmx.prompt or ""
    if request.headers.get("HX-Prompt-URI-AutoEncoded") == "true":  # htmx's way to send non-Latin-1
        try:  # decoded, then checked as the form's own text was before it reached the view
            title = unquote(title, errors="strict")
        except UnicodeDecodeError:
            return refusal(UTF8_MESSAGE, 400)
        if has_nul(title):
            return refusal(NUL_MESSAGE, 400)
    title = " ".join(title.split())
    if len(title) > TITLE_MAX_CHARS:
        return refusal(f"A name can be at most {TITLE_MAX_CHARS} characters long.", 422)
    if title:
        conversation.title = title
        db.session.commit()
    return render_template("chat/_renamed.html", item=conversation, open_id=open_conversation_id(),
                           focus="link")


@bp.delete("/c/<conversation_id>")
def mark_conversation_deleted(conversation_id):
    """Delete a conversation: gone from the sidebar at once, restorable for a few seconds."""
    conversation = get_conversation_or_404(conversation_id)
    deleted = {"id": conversation.id, "title": conversation.title}  # the row may be purged below
    storage.mark_deleted(conversation)
    if open_conversation_id() == conversation_id:
        return htmx_response("", redirect=url_for(".show_page", deleted=deleted["id"]))
    return render_template("chat/_sidebar.html", **sidebar(open_conversation_id()), deleted=deleted)


@bp.post("/c/<conversation_id>/restore")
def restore_conversation(conversation_id):
    """Undo a delete still in its window; too late (or not this visitor's), it is 404 like any other."""
    conversation = storage.get_deleted_conversation(conversation_id, g.user)
    if conversation is None:  # already restored (say, in another tab), or 404
        get_conversation_or_404(conversation_id)
        return render_template("chat/_sidebar.html", **sidebar(open_conversation_id()))
    storage.restore_conversation(conversation)
    if open_conversation_id() is None and request.form.get("reopen"):
        return htmx_response("", redirect=url_for(".show_conversation", conversation_id=conversation.id))
    return render_template("chat/_sidebar.html", **sidebar(open_conversation_id()))


def open_conversation_id() -> str | None:
    """The conversation the browser has open, from htmx's HX-Current-URL."""
    path = urlsplit(htmx.current_url or "").path.rstrip("/").split("/")
    return path[2] if len(path) == 3 and path[1] == "c" else None
