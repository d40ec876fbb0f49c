"""The sidebar's next page: what "Show more conversations" at the end of a section loads."""
from datetime import datetime

from flask import abort, render_template, request
from flask_htmx import make_response as htmx_response

from .conversation_views import open_conversation_id
from .sidebar import SECTIONS, section_page
from .views import bp


def bad_request(error: str):
    abort(htmx_response(render_template("chat/_error.html", error=error), 400))


def cursor_arg() -> tuple[datetime, str]:
    """The last conversation shown, as ?before=ISO-TIME&id=ID; anything else is a 400."""
    try:
        before = datetime.fromisoformat(request.args.get("before", ""))
    except ValueError:
        bad_request("“before” must be a time such as 2026-12-01T09:30:00.")
    last_id = request.args.get("id", "")
    if before.tzinfo is not None or not 0 < len(last_id) <= 32:
        bad_request("Ask for the conversations before=TIME (UTC, no zone) and id=ID.")
    return before, last_id


@bp.get("/conversations")
def show_more_conversations():
    """The next page of one sidebar section (?section=pinned, recent or archived), the visitor's own."""
    section = SECTIONS.get(request.args.get("section", ""))
    if section is None:
        bad_request("“section” must be pinned, recent or archived.")
    return render_template("chat/_conversation_page.html", page=section_page(section, cursor_arg()),
                           loaded=True, open_id=open_conversation_id())
