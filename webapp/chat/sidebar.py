"""The sidebar's conversations: pinned on top, then newest first under Today, Yesterday, Previous
7 days and Older, and the archived ones under a closed "Archived" section. Each section shows one
page (NIMBUS_SIDEBAR_PAGE) and a "Show more conversations" button for the next: 20,000
conversations cost the page 20 do."""
from dataclasses import dataclass
from datetime import date, datetime

from flask import current_app, g, request
from sqlalchemy import and_, or_, select

from .. import storage
from ..extensions import db
from ..local_time import local
from ..models import Conversation, User, utcnow


@dataclass(frozen=True)
class Section:
    """One list of the sidebar: which conversations, in what order (newest `key` first)."""
    name: str
    key: str  # the column it is ordered by; (key, id) is the cursor, read from an index

    def where(self):
        listed = Conversation.deleted_at.is_(None)
        if self.name == "pinned":
            return and_(listed, Conversation.pinned_at.is_not(None), Conversation.archived_at.is_(None))
        if self.name == "archived":
            return and_(listed, Conversation.archived_at.is_not(None))
        return and_(listed, Conversation.pinned_at.is_(None), Conversation.archived_at.is_(None))

    def cursor(self, conversation: Conversation) -> tuple[datetime, str]:
        return getattr(conversation, self.key), conversation.id


# Pinned newest pin first; archived newest archived first; the rest by their last activity.
SECTIONS = {s.name: s for s in (Section("pinned", "pinned_at"), Section("recent", "updated_at"),
                                Section("archived", "archived_at"))}


def page_size() -> int:
    return max(1, current_app.config["NIMBUS_SIDEBAR_PAGE"])


def conversations_page(user: User, section: Section, after: tuple[datetime, str] | None,
                       limit: int) -> tuple[list[Conversation], bool]:
    """Up to `limit` of the person's conversations in `section` past the cursor `after` (the last
    one shown), and whether more follow. A keyset on (key, id), never an OFFSET: the tenth page
    reads as few rows as the first, and a tie on the key neither repeats nor skips one."""
    key = getattr(Conversation, section.key)
    query = select(Conversation).where(Conversation.user_id == user.id, section.where())
    if after is not None:
        # `key <= at` is the range the (user_id, key, id) index reads; the OR only breaks ties.
        at, last_id = after
        query = query.where(key <= at, or_(key < at, Conversation.id < last_id))
    rows = list(db.session.scalars(query.order_by(key.desc(), Conversation.id.desc())
                                   .limit(limit + 1)))
    return rows[:limit], len(rows) > limit


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


def section_page(section: Section, after: tuple[datetime, str] | None = None) -> dict:
    """What templates/chat/_conversation_page.html needs for one page of `section`: its items
    (by date group for the recent ones) and the cursor of the next page, if there is one."""
    items, more = conversations_page(g.user, section, after, page_size())
    now = utcnow()
    return {"section": section.name, "items": items,
            "groups": grouped(items, now) if section.name == "recent" else [(None, items)] * bool(items),
            # a page that continues a date group does not repeat its heading
            "continued": (date_group(local(after[0]), local(now).date())
                          if after is not None and section.name == "recent" else None),
            "next": section.cursor(items[-1]) if more else None}


def sidebar(open_id: str | None, archived_open: bool = False) -> dict:
    """What templates/chat/_sidebar.html needs; conversations past their undo window go for good."""
    storage.purge_deleted(g.user, current_app.config["NIMBUS_DELETE_UNDO_SECONDS"])
    pinned, recent, archived = (section_page(SECTIONS[name]) for name in ("pinned", "recent", "archived"))
    shown = len(archived["items"])
    return {"pinned": pinned, "recent": recent, "archived": archived,
            "archived_label": f"{shown}+" if archived["next"] else str(shown),
            "archived_open": archived_open or any(c.id == open_id for c in archived["items"]),
            "open_id": open_id}


def first_of_recent(user: User) -> tuple[str, datetime] | None:
    """The conversation the recent section opens with (id, last use), read from its index."""
    recent = SECTIONS["recent"]
    return db.session.execute(
        select(Conversation.id, Conversation.updated_at)
        .where(Conversation.user_id == user.id, recent.where())
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc()).limit(1)).first()


def opens_today(first: tuple[str, datetime] | None) -> bool:
    return first is not None and date_group(local(first[1]), local(utcnow()).date()) == "Today"


def after_send(conversation: Conversation, first_before: tuple[str, datetime] | None,
               title_before: str | None = None) -> dict:
    """What a send's answer does to the sidebar (`first_before`: what the recent section opened
    with before the send): nothing when the conversation already opened it under Today or is
    pinned, and kept its title; a new conversation put first under Today when the section opens
    with Today; else the whole sidebar again. Not every section's menus on every message: a
    page of 50 is about 100 KB, which a phone would fetch and lay out again each time."""
    titled = title_before is not None and conversation.title != title_before
    if conversation.archived_at is None and not titled:
        if conversation.pinned_at is not None and title_before is not None:
            return {"sidebar_kept": True}
        if first_before is not None and opens_today(first_before):
            if first_before[0] == conversation.id:
                return {"sidebar_kept": True}
            if title_before is None:  # just started: one item, first under Today
                return {"sidebar_first": conversation}
    return sidebar(conversation.id)


def recently_deleted():
    """The conversation named by /?deleted=ID, when it can still be restored (for the undo note)."""
    conversation_id = request.args.get("deleted")
    if not conversation_id:
        return None
    conversation = storage.get_deleted_conversation(conversation_id, g.user)
    window = current_app.config["NIMBUS_DELETE_UNDO_SECONDS"]
    return conversation if conversation is not None and window > 0 else None
