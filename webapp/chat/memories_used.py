""""Used N memories" under an answer: which long-term memories its request carried, as the
reader may see them.

The figure comes from the turn's request manifest alone (webapp/context/manifest.py), so a page
of turns costs no query for it; the list is read when it is opened. A customer sees their own
memories and the shared ones that apply to them, in plain words; staff of the shop see every one,
with the recall scores. Nobody sees another tenant's memory or another person's personal one.
"""
from dataclasses import dataclass

from flask import g, render_template, url_for
from sqlalchemy import select

from .. import access
from ..context import memories_sent, memory_count
from ..extensions import db, htmx
from ..memories.models import Memory
from ..memories import SessionScope, about, applies_to, describe, scope_for_customer, to_you
from ..models import Conversation, User
from .views import bp, get_turn_or_404


@dataclass
class UsedMemory:
    text: str | None  # None: deleted since, or not one this reader may see
    scope: str = ""
    why: str = ""
    source_url: str | None = None  # the turn it came from, when the reader may open it
    panel_url: str | None = None  # where the reader can change it
    changed_since: bool = False


def memories_used(turn) -> int | None:
    """How many memories the turn's request carried; None when no manifest says."""
    return None if turn.outcome == "pending" else memory_count(turn.manifest)


def plain_why(why: str) -> str:
    """Why a memory was recalled, without the scores a customer has no use for."""
    if why.startswith("recency"):
        return "one of the newest"
    return "related to your question" if why else ""


def readable(reader, ids: list[int]) -> dict[int, Memory]:
    """The memories among `ids` this reader may read: staff their tenant's, others theirs."""
    if not ids:
        return {}
    where = (Memory.tenant_id == reader.tenant_id) if reader.is_staff else \
        SessionScope.for_user(reader).applies()
    return {m.id: m for m in db.session.scalars(select(Memory).where(Memory.id.in_(ids), where))}


def source_url(reader, memory: Memory) -> str | None:
    if memory.conversation_id is None or memory.turn_seq is None:
        return None
    conversation = db.session.get(Conversation, memory.conversation_id)
    if conversation is None or not access.may(reader, access.READ, conversation):
        return None
    anchor = f"turn-{memory.turn_seq + 1}"
    if conversation.user_id == reader.id:
        return url_for("chat.show_conversation", conversation_id=conversation.id,
                       _anchor=f"{anchor}-question")
    return url_for("staff.show_conversation", conversation_id=conversation.id, _anchor=anchor)


def shown(reader, memory: Memory, why: str, turn) -> UsedMemory:
    own = memory.subject_id is not None and memory.subject_id == reader.id
    if reader.is_staff and not own:
        subject = db.session.get(User, memory.subject_id) if memory.subject_id else None
        text = about(memory.content, subject.name if subject else None)
        scope = describe(memory) + (f" · {subject.name}" if subject else "")
    else:
        text = to_you(memory.content, reader.name) if own else memory.content
        scope, why = f"{scope_for_customer(memory)} · applies to {applies_to(memory).lower()}", plain_why(why)
    panel = url_for("memories.show_panel", _anchor=f"memory-{memory.id}") \
        if not reader.is_staff else None
    return UsedMemory(text, scope, why, source_url(reader, memory), panel,
                      memory.updated_at > turn.created_at)


def used_memories(reader, turn) -> list[UsedMemory]:
    """Every memory of the turn's request, in the block's order, as `reader` may see it."""
    sent = memories_sent(turn.manifest) or []
    found = readable(reader, [id_ for id_, _ in sent])
    return [shown(reader, found[id_], why, turn) if id_ in found else UsedMemory(None)
            for id_, why in sent]


@bp.get("/c/<conversation_id>/turns/<int:number>/memories")
def show_memories_used(conversation_id, number):
    """Show the memories the request of turn `number` (from 1) carried, as the reader may."""
    conversation = access.get_conversation_or_404(conversation_id, access.READ)
    turn = get_turn_or_404(conversation, number - 1)
    template = "chat/_memories_used.html" if htmx else "chat/memories_used.html"
    return render_template(template, conversation=conversation, turn=turn,
                           used=used_memories(g.user, turn))


def init_app(app) -> None:
    app.jinja_env.globals["memories_used"] = memories_used
