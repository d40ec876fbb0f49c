"""The sidebar's conversations: pinned on top, then newest first under Today, Yesterday, Previous
7 days and Older, and the archived ones under a closed "Archived" section."""
from datetime import date, datetime, timedelta

from flask import current_app, g, request

from .. import storage
from ..local_time import local
from ..models import Conversation, utcnow


def date_group(updated: datetime, today: date) -> str:
    """The heading a conversation last touched at `updated` (the reader's time) sits under."""
    days = (today - updated.date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days <= 7:
        return "Previous 7 days"
    return "Older"


def grouped(conversations: list[Conversation], now: datetime) -> list[tuple[str, list[Conversation]]]:
    """(heading, conversations) in order, days as the reader lives them; headings without
    conversations are left out."""
    groups: list[tuple[str, list[Conversation]]] = []
    today = local(now).date()
    for conversation in conversations:
        heading = date_group(local(conversation.updated_at), today)
        if not groups or groups[-1][0] != heading:
            groups.append((heading, []))
        groups[-1][1].append(conversation)
    return groups


def sidebar(open_id: str | None, archived_open: bool = False) -> dict:
    """What templates/chat/_sidebar.html needs; conversations past their undo window go for good."""
    storage.purge_deleted(g.user, current_app.config["NIMBUS_DELETE_UNDO_SECONDS"])
    conversations = storage.list_conversations(g.user)
    archived = [c for c in conversations if c.archived_at is not None]
    pinned = sorted((c for c in conversations if c.pinned_at is not None and c.archived_at is None),
                    key=lambda c: c.pinned_at, reverse=True)
    rest = [c for c in conversations if c.pinned_at is None and c.archived_at is None]
    return {"pinned": pinned, "groups": grouped(rest, utcnow()), "archived": archived,
            "archived_open": archived_open, "open_id": open_id,
            "has_conversations": bool(conversations)}


def recently_deleted():
    """The conversation named by /?deleted=ID, when it can still be restored (for the undo note)."""
    conversation_id = request.args.get("deleted")
    if not conversation_id:
        return None
    conversation = storage.get_deleted_conversation(conversation_id, g.user)
    window = current_app.config["NIMBUS_DELETE_UNDO_SECONDS"]
    return conversation if conversation is not None and window > 0 else None
