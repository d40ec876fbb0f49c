"""Find a fact: the turns that mention a phrase, their fate under the current view, and whether
the next request still carries the phrase — in the history, the summary or the memory block."""
import json
from dataclasses import dataclass, field

from sqlalchemy import Text, cast, or_, select

from ..extensions import db
from ..models import Turn
from ..security import has_nul

MAX_QUERY = 100
MAX_MATCHES = 50


class FindError(ValueError):
    """A search we cannot run; the text says why."""


@dataclass
class Match:
    seq: int
    fate: str | None
    reason: str
    snippet: str
    sent: bool  # the next request carries this turn's mention (FULL or COMPACTED, in the words sent)

    @property
    def number(self) -> int:
        return self.seq + 1


@dataclass
class Found:
    query: str
    matches: list[Match] = field(default_factory=list)
    carried_in: list[str] = field(default_factory=list)  # sections of the next request that carry it
    more: bool = False

    def payload(self) -> dict:
        return {"query": self.query, "carried_in": self.carried_in, "more": self.more,
                "matches": [{"seq": m.seq, "number": m.number, "fate": m.fate, "reason": m.reason,
                             "snippet": m.snippet, "sent": m.sent} for m in self.matches]}


def like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def snippet(text: str, query: str, around: int = 60) -> str:
    at = text.lower().find(query.lower())
    start = max(0, at - around)
    return ("…" if start else "") + text[start:at + len(query) + around].strip() + (
        "…" if at + len(query) + around < len(text) else "")


def mentions(messages: list[dict], query: str) -> str | None:
    for m in messages:
        text = m.get("content") or ""
        if query.lower() in text.lower():
            return text
    return None


def find_fact(conversation, report, query: str) -> Found:
    query = (query or "").strip()
    if len(query) < 2 or len(query) > MAX_QUERY or has_nul(query):
        raise FindError(f"search for 2 to {MAX_QUERY} characters")
    escaped = json.dumps(query)[1:-1]  # as the JSON column stores non-ASCII text
    rows = db.session.execute(
        select(Turn.seq, Turn.messages).where(
            Turn.conversation_id == conversation.id,
            or_(Turn.question.ilike(like(query), escape="\\"),
                Turn.answer.ilike(like(query), escape="\\"),
                cast(Turn.messages, Text).ilike(like(escaped), escape="\\")))
        .order_by(Turn.seq.desc()).limit(MAX_MATCHES + 1)).all()
    found = Found(query, more=len(rows) > MAX_MATCHES)
    for seq, messages in rows[:MAX_MATCHES]:
        text = mentions(messages, query)
        if text is None:
            continue
        fate, reason = report.fates.of(seq)
        sent_messages, _ = report.fates.sent(seq)
        found.matches.append(Match(seq, fate, reason, snippet(text, query),
                                   mentions(sent_messages, query) is not None))
    found.matches.reverse()
    found.carried_in = [s.title for s in report.sections if mentions(s.messages, query)]
    return found
