"""The newest finished turns of a conversation, read in one Core statement sized to the budget.

A strategy reads turns newest-first and stops as soon as it can decide the rest, so the statement
asks for about as many rows as the budget holds (from the conversation's average turn size, with
room to spare); a strategy that wants more gets the next rows from a follow-up statement. The
stored JSON is decoded only for the form of a turn that is actually sent.
"""
import json
import math
from typing import Iterator

from sqlalchemy import String, bindparam, select, type_coerce

from ..extensions import db
from ..llm import as_sent
from ..models import Turn

MIN_ROWS, MAX_ROWS = 8, 512
NO_LIMIT = 2 ** 31 - 1  # past any seq: the column is a 32-bit integer on PostgreSQL


class TailTurn:
    """What a strategy needs of a stored turn; messages and compact decode when first asked for."""
    __slots__ = ("id", "seq", "question", "full_tokens", "compact_tokens", "created_at",
                 "tool_calls", "_messages", "_compact")

    def __init__(self, row):
        (self.id, self.seq, self.question, self.full_tokens, self.compact_tokens,
         self.created_at, self.tool_calls, self._messages, self._compact) = row

    @property
    def messages(self) -> list[dict]:
        if not isinstance(self._messages, list):
            self._messages = as_sent(decoded(self._messages))
        return self._messages

    @property
    def compact(self) -> list[dict]:
        if not isinstance(self._compact, list):
            self._compact = decoded(self._compact)
        return self._compact


def decoded(value):
    """JSON text as SQLite returns it; PostgreSQL drivers may already hand back the list."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value


# Built once: the shape never changes, so SQLAlchemy's compiled cache always hits.
COLUMNS = (Turn.id, Turn.seq, Turn.question, Turn.full_tokens, Turn.compact_tokens,
           Turn.created_at, Turn.tool_calls, type_coerce(Turn.messages, String),
           type_coerce(Turn.compact, String))
FINISHED_BEFORE = (Turn.conversation_id == bindparam("conversation_id"),
                   Turn.outcome != "pending", Turn.seq < bindparam("before_seq"))
# Pinned and left-out turns are not the strategy's to plan: pins.py reads them on their own.
TAIL = (select(*COLUMNS).where(*FINISHED_BEFORE, Turn.mark.is_(None))
        .order_by(Turn.seq.desc()).limit(bindparam("rows")))


def rows_for(conversation, budget_tokens: int, ratio: float, extra: int = 0) -> int:
    """About twice the turns the budget holds at this conversation's average turn size."""
    average = (conversation.history_tokens or 0) / max(conversation.turn_count or 1, 1)
    fit = math.ceil(budget_tokens / max(average * (ratio or 1.0), 1.0))
    return min(max(2 * fit + extra + 2, MIN_ROWS), MAX_ROWS)


def newest_first(conversation_id: str, before_seq: int | None = None,
                 rows: int = 64) -> Iterator[TailTurn]:
    """Finished turns before `before_seq`, newest first: `rows` at once, then more if asked."""
    connection = db.session.connection()
    upper = before_seq if before_seq is not None else NO_LIMIT
    while upper > 0:
        found = connection.execute(TAIL, {"conversation_id": conversation_id,
                                          "before_seq": upper, "rows": rows}).all()
        yield from map(TailTurn, found)
        if len(found) < rows:
            return
        upper, rows = found[-1][1], min(rows * 2, MAX_ROWS)
