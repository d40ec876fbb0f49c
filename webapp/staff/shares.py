"""Share links: staff give a stakeholder a read-only view of one conversation's viewer.

A link carries its row's id and key, signed with SECRET_KEY; the row says when it expires and
whether it was revoked, so a link can be listed in the console and withdrawn at any time.
"""
from datetime import timedelta

from flask import Blueprint, abort, current_app, g, redirect, render_template, request, url_for
from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import select

from ..plurals import plural
from ..extensions import db
from ..models import Conversation, ShareLink, utcnow
from ..access import READ, get_conversation_or_404, staff_required
from ..security import whole_number
from ..audit import record
from ..viewer import hide_memories, hide_private_results

bp = Blueprint("shares", __name__)
public_bp = Blueprint("share", __name__)
MAX_DAYS = 90
LISTED = 50


def serializer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.secret_key, salt="nimbus-share-link")


def share_url(link: ShareLink) -> str:
    return url_for("share.show_shared", token=serializer().dumps([link.id, link.key]),
                   _external=True)


def link_state(link: ShareLink) -> str:
    if link.revoked_at is not None:
        return "revoked"
    if link.conversation.deleted_at is not None:  # a dead link, its title gone with the conversation
        return "deleted"
    return "expired" if link.expires_at <= utcnow() else "active"


def listed_links(tenant_id: int) -> list[ShareLink]:
    return list(db.session.scalars(
        select(ShareLink).join(Conversation, Conversation.id == ShareLink.conversation_id)
        .where(Conversation.tenant_id == tenant_id).order_by(ShareLink.id.desc()).limit(LISTED)))


def active_link(token: str) -> ShareLink | None:
    """The link a token names if its signature holds and it is neither expired nor revoked."""
    try:
        link_id, key = serializer().loads(token)
    except (BadSignature, TypeError, ValueError):
        return None
    link = db.session.get(ShareLink, link_id) if isinstance(link_id, int) else None
    if link is None or link.key != key or link_state(link) != "active":
        return None
    if link.conversation.deleted_at is not None:  # deleted by its owner: gone for everyone at once
        return None
    return link


@bp.post("/c/<conversation_id>/share")
@staff_required
def create(conversation_id):
    """Create a read-only link to this conversation's viewer, valid for the chosen days."""
    conversation = get_conversation_or_404(conversation_id, READ)
    days = request.form.get("days", "").strip() or str(current_app.config["NIMBUS_SHARE_DAYS"])
    if whole_number(days, 1, MAX_DAYS) is None:
        abort(400, description=f"A share link lasts from 1 to {MAX_DAYS} days.")
    link = ShareLink(conversation_id=conversation.id, created_by=g.user.id,
                     expires_at=utcnow() + timedelta(days=int(days)),
                     include_shared_memories=request.form.get("shared_memories") == "1")
    db.session.add(link)
    record(g.user, "created share link", conversation=conversation, detail=plural(int(days), "day"))
    return redirect(url_for("staff.show_console", _anchor="share-links"), 303)


@bp.post("/staff/shares/<int:link_id>/revoke")
@staff_required
def revoke(link_id):
    """Revoke a share link at once: whoever holds it sees a missing page from now on."""
    link = db.session.get(ShareLink, link_id) if link_id < 2**62 else None
    if link is None or link.conversation.tenant_id != g.user.tenant_id:
        abort(404)
    link.revoked_at = link.revoked_at or utcnow()
    record(g.user, "revoked share link", conversation=link.conversation)
    return redirect(url_for("staff.show_console", _anchor="share-links"), 303)


@public_bp.get("/s/<token>")
def show_shared(token):
    """Show a shared conversation's viewer, signed out and read-only (nothing on it changes data)."""
    from ..viewer import report_for
    link = active_link(token)
    if link is None:
        abort(404)
    record(None, "opened share link", conversation=link.conversation)  # who: the link's holder
    before = request.args.get("before", type=int)
    report, _ = report_for(link.conversation, {}, before if before and 0 < before < 2**62 else None)
    hide_memories(report, link.include_shared_memories)
    hide_private_results(report)

    def page_url(**params):
        return url_for(".show_shared", token=token,
                       **{k: v for k, v in params.items() if v is not None})
    def turn_url(seq: int) -> str:  # the fate strip's cells: the shared page around that turn
        before = seq + current_app.config["NIMBUS_VIEWER_PAGE_TURNS"] // 2 + 1
        return page_url(before=before if before < report.turn_total else None) + f"#turn-{seq + 1}"
    return render_template("viewer/page.html", report=report, error=None, notice=None,
                           page_url=page_url, turn_url=turn_url, json_url=None, shared=True)
