"""The memory panel (/memories) and the sidebar's search over past turns (/search).

Thin views over the store: the visitor sees the memories that apply to them, grouped by scope,
changes their own, adds by hand and chooses whether new memories are written. Every form works
without JavaScript (post, then redirect); with htmx the panel swaps itself in place.
"""
from flask import (Blueprint, abort, current_app, g, jsonify, redirect, render_template,
                   request, url_for)

from sqlalchemy import select

from ...extensions import db, htmx
from ...models import Conversation
from ..store.export import export_memories
from ..search.conversations import search_turns
from ..distiller.phrasing import about
from ..store.revisions import Changer, history_of
from ..store.scopes import (
    ACCOUNT,
    ORDER,
    SCOPE_WORDS,
    TENANT_WORD,
    InvalidScope,
    SessionScope,
    applies_to,
    scope_label,
)
from ..store.sharing import set_memory_sharing, shares_memories, sharing_choice
from ..store.rows import (InvalidMemory, delete_memory, editable, may_edit_memory, newest, remember,
                         update_content, visible)

bp = Blueprint("memories", __name__)
bp.add_app_template_filter(about, "about")  # staff views: a note with the person's name
PANEL_LIMIT = 200
SEARCH_LIMIT = 8


def get_editable_memory_or_404(scope: SessionScope, memory_id: int):
    """A memory the visitor may change; a foreign, unknown or read-only one answers 404."""
    memory = visible(scope, memory_id)
    if not may_edit_memory(g.user, scope, memory):  # beside editable, in store/rows.py
        abort(404)
    return memory


def heading(memory) -> str:
    """The panel's heading for a memory: what it is about, and for the shop's, that it is shared."""
    label = scope_label(memory)
    if label == TENANT_WORD:
        return "From the shop, for every customer" if memory.shared else "About you"
    return "Your account" if label == ACCOUNT else label[:1].upper() + label[1:]


def groups(scope: SessionScope) -> list[tuple[str, list]]:
    """(heading, memories): about you, your account, each order, then the shop's own."""
    memories = newest(scope, PANEL_LIMIT)
    rank = {None: 0, ACCOUNT: 1, ORDER: 2}

    def order(m):
        shop_wide = m.memorable_type is None and m.shared
        return (shop_wide, rank[m.memorable_type], m.memorable_id or 0)

    grouped: dict[str, list] = {}
    for memory in sorted(memories, key=order):
        grouped.setdefault(heading(memory), []).append(memory)
    return list(grouped.items())


ACTIONS = {"edited": "Edited", "superseded": "Replaced", "merged": "Merged"}


def changed_by(row) -> str:
    """Who changed a memory, in the panel reader's words."""
    if row.changed_by_id is not None and row.changed_by_id == g.user.id:
        return "by you"
    if row.changed_by == "distiller":
        return "after a conversation"
    return "by the shop's staff" if row.changed_by in ("staff", "shell") else "by another person"


def own_conversations(scope: SessionScope, memories, history) -> set[str]:
    """Provenance links only to the visitor's own conversations (others' would 404 anyway)."""
    ids = {m.conversation_id for _, group in memories for m in group if m.conversation_id}
    ids |= {row.conversation_id for rows in history.values() for row in rows if row.conversation_id}
    if not ids:
        return set()
    return set(db.session.scalars(select(Conversation.id).where(
        Conversation.id.in_(ids), Conversation.user_id == scope.subject_id)))


def render_panel(error: str | None = None, status: int = 200):
    scope = SessionScope.for_user(g.user)
    memories = groups(scope)
    history = history_of(m.id for _, group in memories for m in group)
    context = {"groups": memories, "own": own_conversations(scope, memories, history),
               "history": history, "actions": ACTIONS, "changed_by": changed_by,
               "addressed_text": lambda m, text: text,  # the words as kept, as Edit holds them
               "can_edit": lambda m: editable(scope, m), "applies_to": applies_to,
               "addressed": lambda m: m.content,
               "words": scope.words(),
               "orders": sorted(scope.orders), "choice": sharing_choice(g.user),
               "sharing": shares_memories(g.user, current_app.config),
               "default_on": current_app.config["NIMBUS_MEMORY_SHARING_DEFAULT"],
               "error": error}
    template = "memories/_panel.html" if htmx else "memories/page.html"
    return render_template(template, **context), status


def done():
    """After a change: the panel again (htmx) or a redirect to it (a plain form post)."""
    return render_panel() if htmx else redirect(url_for(".show_panel"))


@bp.get("/memories")
def show_panel():
    """Show the visitor's memories grouped by scope, with the sharing switch and an add form."""
    return render_panel()


@bp.post("/memories")
def add_memory():
    """Add a memory by hand; it applies only to the visitor, whatever the form says."""
    if request.form.get("shared", "0") != "0":
        return render_panel("Only the shop's staff can add memories for every customer; "
                            "notes you add apply only to you.", 403)
    word = request.form.get("scope", TENANT_WORD)
    if word not in SCOPE_WORDS:
        return render_panel(f"Unknown scope {word!r}.", 422)
    try:
        remember(SessionScope.for_user(g.user), request.form.get("content"), current_app.config,
                 source="hand", word=word, personal=True,
                 order_number=request.form.get("order") or None)
    except (InvalidScope, InvalidMemory) as error:
        return render_panel(f"Not added: {error}.", 422)
    return done()


@bp.post("/memories/<int:memory_id>")
def edit_memory(memory_id):
    """Change what one of the visitor's memories says."""
    memory = get_editable_memory_or_404(SessionScope.for_user(g.user), memory_id)
    try:
        update_content(memory, request.form.get("content"), current_app.config,
                       Changer.person(g.user))
    except InvalidMemory as error:
        return render_panel(f"Not saved: {error}.", 422)
    return done()


@bp.post("/memories/<int:memory_id>/delete")
def delete_memory_view(memory_id):
    """Delete one of the visitor's memories for good."""
    delete_memory(get_editable_memory_or_404(SessionScope.for_user(g.user), memory_id),
                  Changer.person(g.user))
    return done()


@bp.post("/memories/<int:memory_id>/branch")
def decide_branch_memory(memory_id):
    """Keep or drop a memory learned on a branch the visitor left (switched away, or edited)."""
    memory = get_editable_memory_or_404(SessionScope.for_user(g.user), memory_id)
    choice = request.form.get("choice")
    if memory.branch_left != "left":
        return render_panel("That memory was not learned on a branch you left.", 409)
    if choice not in ("keep", "drop"):
        return render_panel("Choose Keep or Drop.", 422)
    if choice == "drop":
        delete_memory(memory, Changer.person(g.user))
    else:
        memory.branch_left = "kept"
        db.session.commit()
    return done()


@bp.get("/memories/export.json")
def export_memories_view():
    """Download the visitor's memories, each with its history, as one JSON file."""
    response = jsonify(export_memories(g.user))
    response.headers["Content-Disposition"] = 'attachment; filename="nimbus-memories.json"'
    return response


@bp.post("/memories/sharing")
def set_sharing():
    """Record the visitor's decision about new memories; "default" forgets it."""
    value = request.form.get("shares")
    if value not in ("1", "0", "default"):
        return render_panel("Choose whether Nimbus may remember new things.", 422)
    set_memory_sharing(g.user, None if value == "default" else value == "1")
    return done()


@bp.get("/search")
def search_history():
    """Search the visitor's own past conversations (the chat sidebar's search box)."""
    query = " ".join(request.args.get("q", "").split())[:200]
    results = search_turns(g.user, query, current_app.config, SEARCH_LIMIT)[0] if query else []
    template = "memories/_history_results.html" if htmx else "memories/search.html"
    return render_template(template, query=query, results=results)
