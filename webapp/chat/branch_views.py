"""Regenerate an answer, edit a question, and switch between the versions of a turn
(webapp/branches.py); the conversation is shown again from the turn that changed."""
from flask import current_app, has_request_context, redirect, render_template, request, url_for
from flask_htmx import make_response as htmx_response

from .. import branches
from ..extensions import htmx
from ..context import window_problem
from ..runs import admit, is_busy
from .views import (bp, busy, get_conversation_or_404, get_turn_or_404, page_size, pane,
                    read_question, refusal, started_here)


def init_app(app) -> None:
    app.jinja_env.globals["turn_versions"] = turn_versions
    app.jinja_env.globals["versions_at"] = versions_at
    app.jinja_env.globals["turn_alternatives"] = branches.alternatives_of  # the viewer's


def turn_versions(turn) -> branches.Versions | None:
    """The versions of a shown turn."""
    return versions_at(turn.conversation_id, turn.seq)


def versions_at(conversation_id: str, seq: int) -> branches.Versions | None:
    """The versions of turn `seq`, read once a request for its conversation (kept on the
    request, not on g: an app context may outlive several requests, as in tests)."""
    if not has_request_context():
        return branches.versions(conversation_id).get(seq)
    cache = request.environ.setdefault("nimbus.turn_versions", {})
    if started_here(conversation_id):
        return None  # one turn, one version
    if conversation_id not in cache:
        cache[conversation_id] = branches.versions(conversation_id)
    return cache[conversation_id].get(seq)


@bp.post("/c/<conversation_id>/turns/<int:seq>/regenerate")
def regenerate_answer(conversation_id, seq):
    """Ask the turn's question again: the answer shown now is kept as the previous version."""
    conversation = get_conversation_or_404(conversation_id)
    return start_branch(conversation, seq, get_turn_or_404(conversation, seq).question)


@bp.post("/c/<conversation_id>/turns/<int:seq>/edit")
def edit_question(conversation_id, seq):
    """Ask an edited question in the turn's place: the turn and every later one are kept as a
    branch to switch back to."""
    conversation = get_conversation_or_404(conversation_id)
    get_turn_or_404(conversation, seq)
    question = read_question()
    if not question:
        return refusal("Write the question before sending it.", 422)
    return start_branch(conversation, seq, question)


@bp.post("/c/<conversation_id>/turns/<int:seq>/versions/<int:position>")
def switch_version(conversation_id, seq, position):
    """Show another version of a turn; the model is sent the chosen branch from now on."""
    conversation = get_conversation_or_404(conversation_id)
    get_turn_or_404(conversation, seq)
    try:
        branches.switch(conversation, seq, position)
    except branches.BranchRefused as problem:
        return refusal(str(problem), 409)
    except LookupError:
        return refusal("That version no longer exists: reload the page.", 404)
    queue_vectors_from(conversation, seq)
    return shown_from(conversation, seq)


def queue_vectors_from(conversation, seq: int) -> None:
    """Conversation search finds the turns that came back: their vectors went with the turns
    that left, so they are made again (in the background; nothing with search off)."""
    if not current_app.config.get("NIMBUS_MEMORY_SEARCH"):
        return
    from sqlalchemy import select
    from ..extensions import db
    from ..jobs import enqueue
    from ..memories import embed_turns_job, without_vector
    from ..models import Turn
    turn_ids = list(db.session.scalars(without_vector(select(Turn.id)).where(
        Turn.conversation_id == conversation.id, Turn.seq >= seq)))
    if turn_ids:
        enqueue(embed_turns_job, turn_ids)


def start_branch(conversation, seq: int, question: str):
    if problem := window_problem(conversation, current_app.config, question):
        return refusal(problem, 422)
    if is_busy(current_app):
        return busy()
    try:
        turn = branches.fork(conversation, seq, question)
    except branches.BranchRefused as problem:
        return refusal(str(problem), 409)
    admit(current_app, turn.id)
    return shown_from(conversation, seq)


def shown_from(conversation, seq: int):
    """The conversation again, on the page that holds turn `seq`; a plain form goes there."""
    if not htmx:
        return redirect(url_for(".show_conversation", conversation_id=conversation.id)
                        + f"#turn-{seq + 1}-question", 303)
    at = seq if seq < conversation.turn_count - page_size() else None
    return htmx_response(render_template("chat/_conversation.html", **pane(conversation, at)),
                         retarget="#conversation", reswap="outerHTML")
