"""The chat page: a sidebar of the guest's conversations, the open one, replies streamed over SSE."""
from urllib.parse import unquote, urlsplit

from flask import (Blueprint, Response, abort, current_app, g, render_template, request,
                   stream_with_context, url_for)
from flask_htmx import make_response as htmx_response
from flask_wtf.csrf import CSRFError

from .. import policy, storage
from . import turn_runs
from ..extensions import db, htmx
from ..llm import is_offline, provider_for
from ..locks import LockBusy, conversation_lock
from .heartbeat import close_if_abandoned
from .reply_stream import reply_events
from .tool_steps import steps_of

bp = Blueprint("chat", __name__)
SUGGESTIONS = ["Can I get a refund for order #1043?", "Where is my order #1041?",
               "How long does shipping take?"]
TITLE_MAX_CHARS = 200  # the title column's length


def get_conversation_or_404(conversation_id: str):
    """The visitor's own conversation (webapp/policy.py); a missing or foreign id answers 404."""
    return policy.get_conversation_or_404(conversation_id, policy.OWN)


def get_turn_or_404(conversation, seq: int):
    turn = storage.get_turn(conversation, seq)
    if turn is None:
        abort(404)
    return turn


@bp.app_context_processor
def chat_context():
    return {"offline_model": lambda: is_offline(current_app),
            "tool_steps": steps_of, "suggestions": SUGGESTIONS}


@bp.get("/")
def show_page():
    """Show the chat page with no conversation open: the first message starts one."""
    return render_template("chat/page.html", **pane(None), **sidebar(None))


@bp.get("/c/<conversation_id>")
def show_conversation(conversation_id):
    """Show a conversation with its whole history (a reply still being written resumes streaming)."""
    conversation = get_conversation_or_404(conversation_id)
    if htmx and not htmx.history_restore_request:
        return render_template("chat/_conversation.html", **pane(conversation))
    return render_template("chat/page.html", **pane(conversation), **sidebar(conversation.id))


@bp.post("/messages")
def start_conversation():
    """Start a conversation with its first message; the reply streams into the new pane."""
    question = read_question()
    if not question:
        return "", 204
    if turn_runs.is_busy(current_app):
        return busy()
    conversation = storage.start_conversation(g.user, question).conversation
    return htmx_response(
        render_template("chat/_started.html", **pane(conversation), **sidebar(conversation.id)),
        push_url=url_for(".show_conversation", conversation_id=conversation.id))


@bp.post("/c/<conversation_id>/messages")
def send_message(conversation_id):
    """Store the question, show it at once, and hand back a bubble that streams the reply."""
    conversation = get_conversation_or_404(conversation_id)
    question = read_question()
    if not question:
        return "", 204
    if turn_runs.is_busy(current_app):
        return busy()
    turn = store_question(conversation, question)
    if turn is None:
        return refusal("Nimbus is still answering your last message: wait for it, or press Stop.", 409)
    return render_template("chat/_sent.html", conversation=conversation, turn=turn, pending=turn,
                           **sidebar(conversation.id))


@bp.get("/c/<conversation_id>/turns/<int:seq>/stream")
def stream_reply(conversation_id, seq):
    """Stream a reply as server-sent events; a finished turn is sent whole, never answered twice."""
    conversation = get_conversation_or_404(conversation_id)
    turn = get_turn_or_404(conversation, seq)
    run = turn_runs.run_for(turn, provider_for(current_app)) if turn.outcome == "pending" else None
    return Response(stream_with_context(reply_events(conversation, turn, run)),
                    mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.post("/c/<conversation_id>/turns/<int:seq>/stop")
def stop_reply(conversation_id, seq):
    """Stop a reply mid-way; what was written so far is saved, marked as stopped."""
    conversation = get_conversation_or_404(conversation_id)
    turn = get_turn_or_404(conversation, seq)
    if turn.outcome == "pending":
        turn_runs.request_stop(turn)
        turn = turn_runs.wait_until_saved(turn.id, current_app.config["NIMBUS_STOP_WAIT"])
    if turn.outcome == "pending":  # its run is elsewhere and slow to notice: keep watching it
        return render_template("chat/_assistant_streaming.html", conversation=conversation, turn=turn)
    return render_template("chat/_reply_finished.html", conversation=conversation, turn=turn, seq=seq)


@bp.patch("/c/<conversation_id>")
def rename_conversation(conversation_id):
    """Rename a conversation with the title typed into hx-prompt."""
    conversation = get_conversation_or_404(conversation_id)
    title = htmx.prompt or request.form.get("title") or ""
    if request.headers.get("HX-Prompt-URI-AutoEncoded") == "true":  # htmx's way to send non-Latin-1
        title = unquote(title)
    if " ".join(title.split()):
        conversation.title = " ".join(title.split())[:TITLE_MAX_CHARS]
        db.session.commit()
    return render_template("chat/_renamed.html", item=conversation, open_id=open_conversation_id())


@bp.delete("/c/<conversation_id>")
def delete_conversation(conversation_id):
    """Delete a conversation and all its turns; deleting the open one goes back to a new chat."""
    conversation = get_conversation_or_404(conversation_id)
    storage.delete_conversation(conversation)
    if open_conversation_id() == conversation_id:
        return htmx_response("", redirect=url_for(".show_page"))
    return render_template("chat/_sidebar.html", **sidebar(open_conversation_id()))


@bp.app_errorhandler(CSRFError)
def refuse_without_csrf(error):
    """A missing or stale CSRF token: say so where the user looks, and how to fix it."""
    return refusal("This page has expired: reload it and send again.", 400)


def pane(conversation) -> dict:
    turns = storage.all_turns(conversation.id) if conversation else []
    pending = turns[-1] if turns and turns[-1].outcome == "pending" else None
    return {"conversation": conversation, "turns": turns, "pending": pending}


def sidebar(open_id) -> dict:
    return {"conversations": storage.list_conversations(g.user), "open_id": open_id}


def open_conversation_id() -> str | None:
    """The conversation the browser has open, from htmx's HX-Current-URL."""
    path = urlsplit(htmx.current_url or "").path.rstrip("/").split("/")
    return path[2] if len(path) == 3 and path[1] == "c" else None


def read_question() -> str:
    """The posted message, trimmed ("" means ignore it); too long a message is refused outright."""
    question = request.form.get("message", "").strip()
    limit = current_app.config["NIMBUS_MAX_MESSAGE_CHARS"]
    if len(question) > limit:
        abort(refusal(f"Your message is {len(question):,} characters long; the limit is "
                      f"{limit:,}. Please shorten it and send again.", 422))
    return question


def store_question(conversation, question: str):
    """Store the question as a pending turn; None while an earlier reply is still being written."""
    pending = storage.pending_turn(conversation)
    if pending is not None and not close_if_abandoned(pending):  # its worker may have died
        return None
    try:
        with conversation_lock(conversation.id, wait=5):
            if storage.pending_turn(conversation) is not None:
                return None
            return storage.start_turn(conversation, question)
    except LockBusy:
        return None


def busy() -> Response:
    """Admission control: this worker writes as many replies as it may. Nothing is stored, so
    the history never holds a question nobody answered, and the message stays in the box."""
    seconds = current_app.config["NIMBUS_BUSY_RETRY_AFTER"]
    response = refusal(f"Nimbus is busy with many conversations right now. Please send again "
                       f"in {seconds} seconds; your message is still here.", 503)
    response.headers["Retry-After"] = str(seconds)
    return response


def refusal(message: str, status: int) -> Response:
    """An inline error under the message box (base.html lets htmx swap 400, 409, 422, 503)."""
    return htmx_response(render_template("chat/_error.html", error=message), status,
                         retarget="#composer-error", reswap="innerHTML")
