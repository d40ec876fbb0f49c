"""Viewer routes for debugging and demos: a past turn as it was sent, finding a fact, two
strategies side by side, and the current view as one self-contained HTML file."""
from dataclasses import asdict
from pathlib import Path

from flask import abort, current_app, jsonify, render_template, request

from .. import branches
from ..access import get_conversation_or_404
from ..extensions import htmx
from ..context import STRATEGIES
from ..security import whole_number
from ..storage import get_turn
from .as_sent import rebuild
from .private_results import hide_memories, hide_private_results
from .compare import CompareError, compare_strategies
from .find import FindError, find_fact
from .views import bp, render_viewer, report_for, turn_link

MAX_SEQ = 2**31 - 1  # a turn number beyond any conversation, and within every database's int


def sent_turn(conversation_id: str, seq: int):
    """The turn at `seq` and its request as sent; `?version=` picks a version not shown (its
    own stored request, webapp/branches.py), and the shown version when it names that one."""
    conversation = get_conversation_or_404(conversation_id)
    turn = get_turn(conversation, seq) if 0 <= seq <= MAX_SEQ else None
    if turn is None:
        abort(404, description=f"This conversation has no turn {seq + 1}.")
    versions = branches.versions(conversation.id).get(seq)
    asked = request.args.get("version")
    position = None if asked is None else whole_number(asked, 1)
    if asked is not None and not (versions and position == versions.active):
        kept = branches.kept_turn(conversation.id, seq, position) if position else None
        if kept is None:
            abort(404, description=f"Turn {seq + 1} has no version {asked}.")
        return conversation, kept, rebuild(kept), versions, position
    return conversation, turn, rebuild(turn), versions, versions.active if versions else None


@bp.get("/c/<conversation_id>/viewer/turns/<int:number>/sent")
def show_sent(conversation_id, number):
    """Show exactly what each model call of turn `number` (from 1) received, rebuilt from its manifest."""
    conversation, turn, sent, versions, position = sent_turn(conversation_id, number - 1)
    template = "viewer/_as_sent.html" if htmx else "viewer/as_sent.html"
    return render_template(template, conversation=conversation, turn=turn, sent=sent,
                           versions=versions, position=position)


@bp.get("/c/<conversation_id>/viewer/turns/<int:number>/sent.json")
def show_sent_json(conversation_id, number):
    """Return a past turn's request as sent: its manifest and every call's messages."""
    seq = number - 1
    _, turn, sent, versions, position = sent_turn(conversation_id, seq)
    shown = {"version": position, "versions": versions.total if versions else 1,
             "active": versions is None or position == versions.active}
    if sent is None:
        why = ("this turn is still being answered" if turn.outcome == "pending"
               else "this turn was recorded before request manifests existed")
        return jsonify({"seq": seq, **shown, "manifest": None, "calls": [], "error": why}), 404
    return jsonify({"seq": seq, **shown, "manifest": sent.manifest, "problems": sent.problems,
                    "sections": [asdict(s) for s in sent.sections],
                    "calls": [{"step": c.step, "messages": c.messages,
                               "estimated_tokens": c.estimated_tokens,
                               "prompt_tokens": c.prompt_tokens} for c in sent.calls]})


@bp.get("/c/<conversation_id>/viewer/find")
def find(conversation_id):
    """List the turns that mention a phrase, their fates, and whether the next request carries it."""
    conversation = get_conversation_or_404(conversation_id)
    report, error = report_for(conversation, request.args)
    try:
        found = find_fact(conversation, report, request.args.get("q", ""))
    except FindError as problem:
        found, error = None, str(problem)
    status = 400 if error else 200
    if request.args.get("format") == "json":
        return (jsonify({"error": error}), 400) if error else jsonify(found.payload())
    template = "viewer/_find.html" if htmx else "viewer/find.html"
    return render_template(template, report=report, found=found, error=error), status


@bp.get("/c/<conversation_id>/viewer/compare")
def compare(conversation_id):
    """Two strategies on the same conversation: tokens per section, and the turns that differ."""
    conversation = get_conversation_or_404(conversation_id)
    try:
        comparison = compare_strategies(conversation, current_app.config, request.args)
    except CompareError as problem:
        return render_template("viewer/compare.html", conversation=conversation,
                               comparison=None, error=str(problem), strategies=STRATEGIES), 400
    if request.args.get("format") == "json":
        return jsonify(comparison.payload())
    return render_template("viewer/compare.html", conversation=conversation,
                           comparison=comparison, error=None, strategies=STRATEGIES,
                           turn_url=lambda seq: turn_link(conversation.id, seq,
                                                          conversation.turn_count))


@bp.get("/c/<conversation_id>/viewer/report.html")
def download(conversation_id):
    """The current view (what-if included) as one HTML file: inline CSS and SVG, no scripts."""
    conversation = get_conversation_or_404(conversation_id)
    # Every turn: the file's strip links each one, and has no other page to send a reader to.
    report, error = report_for(conversation, request.args, size=max(1, conversation.turn_count))
    if error:
        return jsonify({"error": error}), 400
    # A file travels: personal memories and what the searches found stay in the app.
    hide_memories(report, show_shop_wide=True)
    hide_private_results(report)
    static = Path(current_app.static_folder) / "css"
    css = "\n".join((static / name).read_text() for name in ("base.css", "viewer.css", "context.css"))
    html, _ = render_viewer(report, static_report=True)
    html = html.replace("/*INLINE-CSS*/", css)
    name = f"nimbus-viewer-{conversation.id[:8]}.html"
    return html, 200, {"Content-Type": "text/html; charset=utf-8",
                       "Content-Disposition": f'attachment; filename="{name}"'}
