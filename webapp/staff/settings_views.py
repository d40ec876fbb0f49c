"""Shop settings for admins (/staff/settings): context defaults, the persona, shared memories.

This is the only page in the browser that writes shop-wide shared memories; it uses the memory
store's own functions, in a scope with the tenant and no person.
"""
from flask import Blueprint, abort, current_app, g, redirect, render_template, request, url_for
from sqlalchemy import select

from ..extensions import db
from ..context import STRATEGIES
from ..memories.models import Memory
from ..memories import (TENANT_WORD, Changer, InvalidMemory, SessionScope, delete_memory, remember,
                        update_content)
from ..context import STYLES
from ..access import admin_required
from .settings import InvalidSettings, parse_settings, save_settings

bp = Blueprint("settings", __name__, url_prefix="/staff")
LISTED = 500


def shop_scope() -> SessionScope:
    return SessionScope(g.user.tenant_id, None)


def shared_memories() -> list[Memory]:
    return list(db.session.scalars(select(Memory).where(
        Memory.tenant_id == g.user.tenant_id, Memory.memorable_type.is_(None),
        Memory.subject_id.is_(None)).order_by(Memory.id.desc()).limit(LISTED)))


def get_shared_memory_or_404(memory_id: int) -> Memory:
    memory = db.session.get(Memory, memory_id) if memory_id < 2**62 else None
    if (memory is None or memory.tenant_id != g.user.tenant_id or memory.subject_id is not None
            or memory.memorable_type is not None):
        abort(404)
    return memory


def render_settings(error=None, notice=None, status=200):
    return render_template("staff/settings.html", settings=g.user.tenant.settings or {},
                           strategies=list(STRATEGIES), styles=list(STYLES),
                           memories=shared_memories(), error=error, notice=notice), status


@bp.get("/settings")
@admin_required
def show_settings():
    """Show the shop's settings and its shared memories."""
    return render_settings(notice="Saved." if request.args.get("saved") else None)


@bp.post("/settings")
@admin_required
def save():
    """Save the shop's defaults and persona; new requests of every conversation use them."""
    try:
        values = parse_settings(request.form)
    except InvalidSettings as problem:
        return render_settings(error=f"Not saved: {problem}.", status=422)
    save_settings(g.user.tenant, values)
    return redirect(url_for(".show_settings", saved=1), 303)


@bp.post("/memories")
@admin_required
def add_shared_memory():
    """Add a memory that applies to everybody in the shop."""
    try:
        remember(shop_scope(), request.form.get("content"), current_app.config, source="hand",
                 word=TENANT_WORD, personal=False)
    except InvalidMemory as problem:
        return render_settings(error=f"Not added: {problem}.", status=422)
    return redirect(url_for(".show_settings", _anchor="shared-memories"), 303)


@bp.post("/memories/<int:memory_id>")
@admin_required
def edit_shared_memory(memory_id):
    """Change what a shop-wide memory says."""
    try:
        update_content(get_shared_memory_or_404(memory_id), request.form.get("content"),
                       current_app.config, Changer.person(g.user))
    except InvalidMemory as problem:
        return render_settings(error=f"Not saved: {problem}.", status=422)
    return redirect(url_for(".show_settings", _anchor="shared-memories"), 303)


@bp.post("/memories/<int:memory_id>/delete")
@admin_required
def delete_shared_memory(memory_id):
    """Delete a shop-wide memory for good."""
    delete_memory(get_shared_memory_or_404(memory_id), Changer.person(g.user))
    return redirect(url_for(".show_settings", _anchor="shared-memories"), 303)
