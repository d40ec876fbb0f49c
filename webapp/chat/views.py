"""The chat page: a sidebar of the guest's conversations, the open one, replies streamed over SSE."""
from types import SimpleNamespace

from flask import (Blueprint, Response, abort, current_app, g, has_request_context,
                   make_response, render_template, request, stream_with_context, url_for)
from flask_htmx import make_response as htmx_response
from flask_wtf.csrf import CSRFError
from sqlalchemy import inspect as sa_inspect

from .. import access, storage
from ..extensions import db, htmx
from ..agent import assistant_name_of
from ..llm import is_offline, provider_for
from ..locks import LockBusy, committed_under, conversation_lock_name
from ..models import Conversation
from ..security import ERROR_SLOTS, refusal as page_refusal, wants_json, length_problem
from ..context import fit_tools, window_problem
from ..runs import (admit, close_if_abandoned, is_busy, request_stop, run_for, wait_until_saved,
                    was_recovered)
from .provider_state import last_failure
from .reply_stream import reply_events
from .sidebar import after_send, first_of_recent, recently_deleted, sidebar
from ..titles import short_title
from .tool_steps import steps_of

bp = Blueprint("chat", __name__)
SUGGESTIONS = ["Can I get a refund for order #1043?", "Where is my order #1041?",
               "How long does shipping take?"]
SEQ_MAX = 2**31 - 1  # turn numbers in URLs: anything larger cannot exist, and would overflow SQL


def get_conversation_or_404(conversation_id: str):
    """The visitor's own conversation (webapp/access.py); a missing or foreign id answers 404."""
    return access.get_conversation_or_404(conversation_id, access.OWN)


def get_turn_or_404(conversation, seq: int):
    """The conversation's turn `seq`; 404 for one that does not exist or no column could hold."""
    turn = storage.get_turn(conversation, seq) if seq <= SEQ_MAX else None
    if turn is None:
        abort(404)
    return turn


def shown_profile(app):
    """The configured provider's profile for the banner; None for the offline model or a
    provider swapped in by tests."""
    from ..llm import uses_openai, profile_for
    if "provider_factory" in app.extensions or not uses_openai(app.config):
        return None
    return profile_for(app.config)


@bp.app_context_processor
def chat_context():
    return {"offline_model": lambda: is_offline(current_app),
            "provider_profile": lambda: shown_profile(current_app),
            "tool_fit": banner_tool_fit,
            "tool_steps": steps_of, "suggestions": SUGGESTIONS, "assistant_name": assistant_name,
            "was_recovered": was_recovered, "provider_failure": last_failure}


def banner_tool_fit(profile, conversation=None):
    """The tools the banner's window holds: fitted to the open conversation, as its next request
    is (its prompt, its learnt token ratio), else to the shop's default prompt. A reply's end is
    rendered with the conversation its stream loaded, by then out of any session: read afresh."""
    if isinstance(conversation, Conversation) and sa_inspect(conversation).detached:
        conversation = db.session.get(Conversation, conversation.id)
    return fit_tools(current_app.config, profile,
                     conversation if isinstance(conversation, Conversation) else None)


def assistant_name() -> str:
    """The name the visitor's shop gave its assistant (the persona), as the model is told it."""
    if "assistant_name" not in g:  # once per request: a stream renders its end without a session
        user = g.get("user")
        g.assistant_name = assistant_name_of(user.tenant if user is not None else None)
    return g.assistant_name


@bp.get("/")
def show_page():
    """Show the chat page with no conversation open: the first message starts one."""
    return render_template("chat/page.html", **pane(None), **sidebar(None), deleted=recently_deleted())


@bp.get("/c/<conversation_id>")
def show_conversation(conversation_id):
    """Show a conversation's newest turns (or those around turn ?at=N, counted from 1, as its
    #turn-N-question anchor is); older ones load on scrolling up."""
    conversation = get_conversation_or_404(conversation_id)
    at = seq_arg("at", low=1, strict=False)
    at = at - 1 if at is not None else None
    if htmx and not htmx.history_restore_request:
        return render_template("chat/_conversation.html", **pane(conversation, at), with_title=True)
    return render_template("chat/page.html", **pane(conversation, at), **sidebar(conversation.id))


@bp.get("/c/<conversation_id>/turns")
def show_turns(conversation_id):
    """The page of turns before ?before=N (scrolling up) or after ?after=N (newer, or another tab's)."""
    conversation = get_conversation_or_404(conversation_id)
    before, after = seq_arg("before"), seq_arg("after", low=-1)
    if (before is None) == (after is None):
        abort(htmx_response(render_template(
            "chat/_error.html", error="Ask for the turns before=N or after=N."), 400))
    turns, more = storage.turns_page(conversation.id, before=before, after=after, limit=page_size())
    pending = turns[-1] if turns and turns[-1].outcome == "pending" else None
    return render_template("chat/_more_turns.html", conversation=conversation, turns=turns,
                           more=more, older=before is not None, pending=pending)


@bp.post("/messages")
def start_conversation():
    """Start a conversation with its first message; the reply streams into the new pane."""
    question = read_question()
    if not question:
        return "", 204
    new = SimpleNamespace(tenant=g.user.tenant, token_ratio=1.0)  # what its prompt reads
    if problem := window_problem(new, current_app.config, question):
        return refusal(problem, 422)  # nothing stored: the box keeps the message
    if is_busy(current_app):
        return busy()
    first_before = first_of_recent(g.user)
    turn = storage.start_conversation(g.user, question, short_title(question))
    admit(current_app, turn.id)
    conversation = turn.conversation
    mark_started(conversation.id)
    return htmx_response(
        render_template("chat/_started.html", **pane(conversation, only=turn),
                        **after_send(conversation, first_before)),
        push_url=url_for(".show_conversation", conversation_id=conversation.id))


@bp.post("/c/<conversation_id>/messages")
def send_message(conversation_id):
    """Store the question, show it at once, and hand back a bubble that streams the reply."""
    conversation = get_conversation_or_404(conversation_id)
    question = read_question()
    if not question:
        return "", 204
    if problem := window_problem(conversation, current_app.config, question):
        return refusal(problem, 422)  # nothing stored: the box keeps the message
    if is_busy(current_app):
        return busy()
    first_before, title_before = first_of_recent(g.user), conversation.title
    turn = store_question(conversation, question)
    if turn is None:
        return refuse_while_pending(conversation)
    admit(current_app, turn.id)
    last_seen = seq_arg("last_seen", low=-1, strict=False)
    if last_seen is not None and last_seen < turn.seq - 1:  # this tab missed turns: show them all
        return htmx_response("", redirect=url_for(".show_conversation", conversation_id=conversation.id))
    return render_template("chat/_sent.html", conversation=conversation, turn=turn, pending=turn,
                           **after_send(conversation, first_before, title_before))


@bp.get("/c/<conversation_id>/turns/<int:seq>/stream")
def stream_reply(conversation_id, seq):
    """Stream a reply as server-sent events; a finished turn is sent whole, never answered twice."""
    conversation = get_conversation_or_404(conversation_id)
    turn = get_turn_or_404(conversation, seq)
    run = run_for(turn, provider_for(current_app)) if turn.outcome == "pending" else None
    assistant_name()  # read now: the stream's last event is rendered after its session ended
    return Response(stream_with_context(reply_events(conversation, turn, run)),
                    mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.post("/c/<conversation_id>/turns/<int:seq>/stop")
def stop_reply(conversation_id, seq):
    """Stop a reply mid-way; what was written so far is saved, marked as stopped."""
    conversation = get_conversation_or_404(conversation_id)
    turn = get_turn_or_404(conversation, seq)
    if turn.outcome == "pending":
        request_stop(turn)
        turn = wait_until_saved(turn.id, current_app.config["NIMBUS_STOP_WAIT"])
    if turn.outcome == "pending":  # its run is elsewhere and slow to notice: keep watching it
        return render_template("chat/_assistant_streaming.html", conversation=conversation, turn=turn)
    return render_template("chat/_reply_finished.html", conversation=conversation, turn=turn, seq=seq)


@bp.app_errorhandler(CSRFError)
def refuse_without_csrf(error):
    """A missing or stale CSRF token: say so where the user looks, and how to fix it."""
    return refusal("This page has expired: reload it and send again.", 400)


@bp.app_errorhandler(404)
def show_not_found(error):
    """A page that says what is missing and leads back, instead of the framework's bare one; a
    page that signing in may open leads to the sign-in form and back."""
    if (isinstance(error, access.SignInWanted) and request.method == "GET" and not wants_json()
            and (not htmx or htmx.history_restore_request)):
        from ..accounts import ask_to_sign_in
        return ask_to_sign_in()
    if wants_json():  # viewer.json, a stream: a JSON answer for the script that asked
        return {"error": "Not found: no such conversation, turn or page here."}, 404
    if htmx:  # static/js/chat.js says so where the user looks
        return "That conversation no longer exists.", 404
    return render_template("chat/not_found.html",
                           conversation_link=request.path.startswith("/c/")), 404


def pane(conversation, at: int | None = None, only=None) -> dict:
    """The open conversation's newest page of turns, or the page from turn `at` on (a deep link);
    `only`: its one turn, just stored, so there is nothing to read."""
    if conversation is None or only is not None:
        return {"conversation": conversation, "turns": [only] if only else [],
                "pending": only if only and only.outcome == "pending" else None,
                "has_older": False, "has_newer": False}
    if at is None:
        turns, has_older = storage.turns_page(conversation.id, limit=page_size())
        has_newer = False
    else:
        turns, has_newer = storage.turns_page(conversation.id, after=at - 3, limit=page_size())
        has_older = bool(turns) and turns[0].seq > 0
    newest = turns[-1] if turns and not has_newer else storage.newest_turn(conversation)
    pending = newest if newest is not None and newest.outcome == "pending" else None
    return {"conversation": conversation, "turns": turns, "has_older": has_older,
            "has_newer": has_newer, "pending": pending}


def mark_started(conversation_id: str) -> None:
    """This request started the conversation: it has no share links and no other versions yet,
    so its page reads none (started_here)."""
    request.environ.setdefault("nimbus.started", set()).add(conversation_id)


def started_here(conversation_id: str) -> bool:
    return has_request_context() and conversation_id in request.environ.get("nimbus.started", ())


def page_size() -> int:
    return max(1, current_app.config["NIMBUS_CHAT_PAGE_TURNS"])


def seq_arg(name: str, low: int = 0, strict: bool = True) -> int | None:
    """A turn number from the query string or form; out of range is a 400 (or ignored, not strict)."""
    raw = request.values.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not low <= value <= SEQ_MAX:
        if not strict:
            return None
        abort(htmx_response(render_template(
            "chat/_error.html", error=f"“{name}” must be a whole number from {low} to {SEQ_MAX}."), 400))
    return value


def read_question() -> str:
    """The posted message, trimmed ("" means ignore it); too long a message is refused outright."""
    question = request.form.get("message", "").strip()
    if problem := length_problem(question, current_app.config):
        abort(refusal(f"Your message is {problem}. Please shorten it and send again.", 422))
    return question


def store_question(conversation, question: str):
    """Store the question as a pending turn; None while an earlier reply is still being written."""
    pending = storage.pending_turn(conversation)
    if pending is not None and not close_if_abandoned(pending):  # its worker may have died
        return None
    try:
        with committed_under(conversation_lock_name(conversation.id), wait=5,
                             commit=storage.commit_keeping_rows):
            if storage.pending_turn(conversation) is not None:
                return None
            return storage.append_turn(conversation, question, commit=False)  # none pending
    except LockBusy:
        return None


def refuse_while_pending(conversation) -> Response:
    """409, with the reply being written (perhaps started in another tab) and its Stop button."""
    pending = storage.pending_turn(conversation)
    last_seen = seq_arg("last_seen", low=-1, strict=False)
    missed = []
    if pending is not None and last_seen is not None and last_seen < pending.seq:
        missed = storage.turns_page(conversation.id, after=max(last_seen, pending.seq - page_size()),
                                    limit=page_size())[0]
    response = refusal("Nimbus is still answering your last message: wait for it, or press Stop.", 409)
    response.set_data(response.get_data(as_text=True) + render_template(
        "chat/_refused_pending.html", conversation=conversation, turns=missed, pending=pending))
    return response


def busy() -> Response:
    """Admission control: this worker writes as many replies as it may. Nothing is stored, so
    the history never holds a question nobody answered, and the message stays in the box."""
    seconds = current_app.config["NIMBUS_BUSY_RETRY_AFTER"]
    response = refusal(f"Nimbus is busy with many conversations right now. Please send again "
                       f"in {seconds} seconds; your message is still here.", 503)
    response.headers["Retry-After"] = str(seconds)
    return response


def refusal(message: str, status: int) -> Response:
    """An inline error under the message box (base.html lets htmx swap 400, 409, 422, 503); a
    plain form post (a login page, a browser without script) gets a page with a way back."""
    current_app.logger.warning("refused a send (HTTP %s): %s", status, message)
    if not htmx:
        return make_response(page_refusal(message, status))
    return htmx_response(render_template("chat/_error.html", error=message), status,
                         retarget=ERROR_SLOTS, reswap="innerHTML")
