"""Viewer routes: the page, its htmx what-if partial, the same data as JSON, applying settings."""
import json

from flask import (Blueprint, current_app, jsonify, make_response, redirect, render_template,
                   request, url_for)

from ..access import APPLY, get_conversation_or_404
from ..extensions import htmx
from ..local_time import when_text
from ..models import utcnow
from .payload import report_payload
from .report import build_report
from .whatif import WhatIfError, apply_policy, what_if_policy, what_if_query

bp = Blueprint("viewer", __name__)


def report_for(conversation, values, before=None, size=None):
    """The report under the what-if settings in `values`; bad values fall back to the stored."""
    try:
        policy = what_if_policy(conversation, current_app.config, values)
        error = None
    except WhatIfError as problem:
        policy, error = None, str(problem)
    return build_report(conversation, current_app.config, policy, before, size), error


def turn_link(conversation_id: str, seq: int, turn_total: int, query: dict | None = None) -> str:
    """The page of turns with `seq` in its middle, scrolled to it."""
    before = seq + current_app.config["NIMBUS_VIEWER_PAGE_TURNS"] // 2 + 1
    params = {**(query or {}), **({"before": before} if before < turn_total else {})}
    return url_for("viewer.show", conversation_id=conversation_id, _anchor=f"turn-{seq + 1}",
                   **params)


def render_viewer(report, error=None, notice=None, status=200, static_report=False):
    """The whole page, or only the plan partial when htmx asks for the what-if re-render."""
    conversation = report.conversation
    query = what_if_query(report.policy, report.stored_policy)

    def page_url(**params):
        params = {k: v for k, v in {**query, **params}.items() if v is not None}
        return url_for("viewer.show", conversation_id=conversation.id, **params)

    def turn_url(seq: int) -> str:
        if static_report:  # a downloaded file has only its own turns to point at
            return f"#turn-{seq + 1}"
        return turn_link(conversation.id, seq, report.turn_total, query)

    context = {"report": report, "error": error, "notice": notice, "page_url": page_url,
               "turn_url": turn_url, "static_report": static_report,
               "now_text": when_text(utcnow()),
               "json_url": url_for("viewer.show_json", conversation_id=conversation.id, **query),
               "download_url": url_for("viewer.download", conversation_id=conversation.id, **query),
               "compare_url": url_for("viewer.compare", conversation_id=conversation.id,
                                      a=report.policy.strategy,
                                      b="window" if report.policy.strategy != "window" else "compact",
                                      budget=report.policy.budget,
                                      recent_turns=report.policy.recent_turns)}
    if static_report:
        template = "viewer/report.html"
    elif htmx and htmx.target == "plan":
        template = "viewer/_plan.html"
    else:
        template = "viewer/page.html"
    return render_template(template, **context), status


@bp.get("/c/<conversation_id>/viewer")
def show(conversation_id):
    """Show stored turns beside what the next request sends, under optional what-if settings."""
    conversation = get_conversation_or_404(conversation_id)
    report, error = report_for(conversation, request.args, request.args.get("before", type=int))
    notice = saved_notice(report) if request.args.get("applied") and not error else None
    return render_viewer(report, error, notice, status=400 if error else 200)


@bp.get("/c/<conversation_id>/viewer.json")
def show_json(conversation_id):
    """Return the viewer's data as JSON (same what-if parameters as the page)."""
    conversation = get_conversation_or_404(conversation_id)
    report, error = report_for(conversation, request.args, request.args.get("before", type=int))
    if error:
        return jsonify({"error": error}), 400
    return jsonify(report_payload(report))


@bp.post("/c/<conversation_id>/viewer/settings")
def apply_settings(conversation_id):
    """Make the previewed strategy and its settings the conversation's own."""
    conversation = get_conversation_or_404(conversation_id, APPLY)
    try:
        policy = what_if_policy(conversation, current_app.config, request.form)
    except WhatIfError as problem:
        return render_viewer(report_for(conversation, {})[0], error=str(problem), status=400)
    apply_policy(conversation, policy)
    viewer_url = url_for("viewer.show", conversation_id=conversation.id)
    if not htmx:
        return redirect(f"{viewer_url}?applied=1", 303)
    report, _ = report_for(conversation, {})
    response = make_response(render_viewer(report, notice=saved_notice(report)))
    response.headers["HX-Push-Url"] = viewer_url  # the what-if query no longer applies
    return response


def saved_notice(report) -> str:
    policy = report.policy
    return (f"Saved: this conversation now uses the {policy.strategy} strategy, a "
            f"{policy.budget:,}-token budget and the {policy.recent_turns} newest turns in full.")


@bp.app_template_filter("pretty_json")
def pretty_json(text: str) -> str:
    """Indent a tool result for reading; text that is not JSON is shown as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return text

