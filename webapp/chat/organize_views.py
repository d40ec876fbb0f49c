"""The sidebar's order, the owner's to choose: pin a conversation on top, archive it out of the
way (under "Archived"), and undo either from the note that says what happened."""
from flask import render_template, request

from ..extensions import db
from ..models import utcnow
from .conversation_views import open_conversation_id
from .sidebar import sidebar
from .views import bp, get_conversation_or_404


def wants(field: str) -> bool:
    """The form's choice: "1" (the default) sets it, "0" undoes it."""
    return request.form.get(field, "1") != "0"


@bp.post("/c/<conversation_id>/pin")
def pin_conversation(conversation_id):
    """Pin a conversation to the top of the sidebar (pinned=0 unpins it)."""
    conversation = get_conversation_or_404(conversation_id)
    pin = wants("pinned")
    conversation.pinned_at = utcnow() if pin else None
    if pin:
        conversation.archived_at = None  # a pinned conversation is in sight, never archived
    db.session.commit()
    note = {"text": f"{'Pinned' if pin else 'Unpinned'} “{conversation.title}”.",
            "url": request.path, "field": "pinned", "undo": "0" if pin else "1"}
    return render_template("chat/_sidebar.html", **sidebar(open_conversation_id()), note=note)


@bp.post("/c/<conversation_id>/archive")
def archive_conversation(conversation_id):
    """Archive a conversation: out of the list, under "Archived" (archived=0 brings it back)."""
    conversation = get_conversation_or_404(conversation_id)
    archive = wants("archived")
    conversation.archived_at = utcnow() if archive else None
    if archive:
        conversation.pinned_at = None
    db.session.commit()
    note = {"text": f"{'Archived' if archive else 'Unarchived'} “{conversation.title}”.",
            "url": request.path, "field": "archived", "undo": "0" if archive else "1"}
    return render_template("chat/_sidebar.html", note=note,
                           **sidebar(open_conversation_id(), archived_open=not archive))
