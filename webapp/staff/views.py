"""The staff console (/staff), a customer's conversation read-only, and the audit log (admins)."""
from flask import Blueprint, current_app, g, render_template, request, url_for

from .. import storage
from ..access import READ, admin_required, get_conversation_or_404, staff_required
from ..security import whole_number
from ..audit import entries
from .console import Filters, InvalidFilter, conversation_page
from .feedback import recent_feedback
from .shares import listed_links

bp = Blueprint("staff", __name__, url_prefix="/staff")
AUDIT_PAGE = 100
FEEDBACK_PAGE = 100


@bp.get("")
@staff_required
def show_console():
    """List every conversation of the tenant, newest first, with filters and full-text search."""
    try:
        filters = Filters.from_args(request.args)
    except InvalidFilter as problem:
        return render_template("staff/console.html", rows=[], more=False, filters=Filters(),
                               error=f"Can't filter like that: {problem}.", links=[]), 400
    rows, more = conversation_page(g.user.tenant_id, filters,
                                   current_app.config["NIMBUS_CONSOLE_PAGE_SIZE"])
    args = {k: v for k, v in request.args.items() if k != "page" and v}

    def page_url(page):
        return url_for(".show_console", **args, page=page)
    return render_template("staff/console.html", rows=rows, more=more, filters=filters,
                           page_url=page_url, links=listed_links(g.user.tenant_id))


@bp.get("/c/<conversation_id>")
@staff_required
def show_conversation(conversation_id):
    """Show a customer's conversation read-only (the opening is audited), with a viewer link."""
    conversation = get_conversation_or_404(conversation_id, READ)
    return render_template("staff/conversation.html", conversation=conversation,
                           turns=storage.all_turns(conversation.id))


@bp.get("/feedback")
@staff_required
def show_feedback():
    """List the newest thumbs up and down on the tenant's answers, with comments and links."""
    return render_template("staff/feedback.html", rows=recent_feedback(g.user.tenant_id, FEEDBACK_PAGE))


@bp.get("/audit")
@admin_required
def show_audit():
    """Show the tenant's audit log, newest first: who opened or deleted what, and when."""
    before_id = whole_number(request.args.get("before"))
    rows = entries(g.user.tenant_id, before_id, AUDIT_PAGE + 1)
    older = rows[AUDIT_PAGE - 1][0].id if len(rows) > AUDIT_PAGE else None
    return render_template("staff/audit.html", rows=rows[:AUDIT_PAGE], older=older)
