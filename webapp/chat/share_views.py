"""Customers share their own conversation read-only from the chat's menu, and revoke it there.

The link is the staff's kind (webapp/staff/shares.py): the viewer, signed out, with no personal
memory's text and never the shop-wide ones' either; it lasts NIMBUS_SHARE_DAYS unless revoked.
"""
from datetime import timedelta

from flask import abort, current_app, g, render_template
from sqlalchemy import select

from ..plurals import plural
from ..audit import record
from ..extensions import db
from ..models import ShareLink, utcnow
from ..staff import link_state, share_url
from .views import bp, get_conversation_or_404, started_here


def active_links(conversation) -> list[ShareLink]:
    """The conversation's links still open to their holders, newest first."""
    links = db.session.scalars(select(ShareLink).where(
        ShareLink.conversation_id == conversation.id, ShareLink.revoked_at.is_(None),
        ShareLink.expires_at > utcnow()).order_by(ShareLink.id.desc()).limit(20))
    return [link for link in links if link_state(link) == "active"]


@bp.app_template_global("share_links_of")
def share_links_of(conversation) -> list[tuple[ShareLink, str]]:
    """(link, address) of each active link: what the chat's menu lists (none for a
    conversation this request started: views.mark_started)."""
    if started_here(conversation.id):
        return []
    return [(link, share_url(link)) for link in active_links(conversation)]


def panel(conversation, focus: bool = False):
    return render_template("chat/_share_panel.html", conversation=conversation,
                           links=share_links_of(conversation), focus=focus)


@bp.post("/c/<conversation_id>/shares")
def share_conversation(conversation_id):
    """Make a read-only link to this conversation, without personal memories."""
    conversation = get_conversation_or_404(conversation_id)
    days = current_app.config["NIMBUS_SHARE_DAYS"]
    db.session.add(ShareLink(conversation_id=conversation.id, created_by=g.user.id,
                             expires_at=utcnow() + timedelta(days=days),
                             include_shared_memories=False))
    record(g.user, "created share link", conversation=conversation,
           detail=f"{plural(days, 'day')}, by its owner")
    return panel(conversation, focus=True)


@bp.post("/c/<conversation_id>/shares/<int:link_id>/revoke")
def revoke_share(conversation_id, link_id):
    """Revoke a link to this conversation at once: its holders see a missing page from now on."""
    conversation = get_conversation_or_404(conversation_id)
    link = db.session.get(ShareLink, link_id) if link_id < 2**62 else None
    if link is None or link.conversation_id != conversation.id:
        abort(404)
    link.revoked_at = link.revoked_at or utcnow()
    record(g.user, "revoked share link", conversation=conversation, detail="by its owner")
    return panel(conversation)
