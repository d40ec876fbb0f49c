"""The memory block: what earlier conversations established, as a section of every request.

Shared memories are grouped apart from personal ones, so the model never applies one person's
preference to everybody; with nothing to say the block is the empty string.
"""
from flask import current_app
from sqlalchemy import select

from ..extensions import db
from ..models import Turn
from ..context import Section, sized, memories_may_apply
from .search.recall import for_prompt
from .store.scopes import ACCOUNT, ORDER, SessionScope, describe, scope_label

TITLE = "What you remember about this customer from earlier conversations:"


def group_order(pair) -> tuple:
    """Shared before personal; within each, the shop, then the account, then orders."""
    memory = pair[0]
    return (not memory.shared, [None, ACCOUNT, ORDER].index(memory.memorable_type))


def render(recalled: list, scope: SessionScope) -> str:
    """Group (memory, why) pairs under headers; within a group, most relevant (or newest) first."""
    if not recalled:
        return ""
    groups: dict[str, list[str]] = {}
    for memory, _ in sorted(recalled, key=group_order):
        label = scope_label(memory)
        about = "the whole shop" if label == "workspace" else (
            "their account" if label == "account" else label)
        if memory.shared:
            header = f"Shared, about {about} (applies to everyone there):"
        else:
            header = f"Personal to {scope.subject_name or 'this person'}, about {about} " \
                     "(applies to nobody else):"
        groups.setdefault(header, []).append(f"- {memory.content}")
    lines = [TITLE]
    for header, items in groups.items():
        lines += ["", header, *items]
    return "\n".join(lines)


def prompt_block(scope: SessionScope, config, query: str | None = None) -> str:
    """Ready to paste into a system prompt; '' when nothing applies to this session."""
    return render(for_prompt(scope, config, query)[0], scope)


def pending_question(conversation) -> str | None:
    """The question being answered right now, if any: what similarity recall looks for."""
    return db.session.scalar(select(Turn.question).where(
        Turn.conversation_id == conversation.id, Turn.seq == conversation.turn_count - 1,
        Turn.outcome == "pending"))


def memory_section(conversation, policy, history) -> Section | None:
    """The 'memory' section, placed before any summary; None when nothing applies."""
    if not memories_may_apply(conversation):
        return None  # none shared in the tenant, none of this person's: no query at all
    config = current_app.config
    scope = SessionScope.for_conversation(conversation)
    query = pending_question(conversation) if config.get("NIMBUS_MEMORY_SEARCH") else None
    recalled, mode = for_prompt(scope, config, query)
    ratio = conversation.token_ratio or 1.0
    messages, left_out = fitted(recalled, scope, ratio, getattr(policy, "memory_room", None))
    if not messages:
        return None
    detail = {"mode": mode, **({"left_out_to_fit": left_out} if left_out else {}), "memories": [
        {"id": m.id, "content": m.content, "scope": describe(m), "shared": m.shared,
         "subject": None if m.shared else scope.subject_name,
         "source": m.source, "conversation_id": m.conversation_id, "turn_seq": m.turn_seq,
         "created_at": m.created_at.isoformat(timespec="seconds"), "why": why}
        for m, why in recalled]}
    return Section("memory", messages, sized(messages, ratio), detail)


def fitted(recalled: list, scope: SessionScope, ratio: float, room: int | None):
    """The block's messages within `room` tokens (the window's share, window.fit), least
    relevant memories left out first; `recalled` is cut to what was kept. ([], n): none fit."""
    left_out = 0
    while recalled:
        messages = [{"role": "system", "content": render(recalled, scope)}]
        if room is None or sized(messages, ratio) <= room:
            return messages, left_out
        recalled[:], left_out = recalled[:-1], left_out + 1
    return [], left_out

