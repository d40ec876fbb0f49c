"""Pinned and left-out turns: steering from the chat that every strategy honours.

A pinned turn is always sent (in full, or as question and answer when the budget demands) and
takes its share of the history budget before the strategy plans the rest; a left-out turn is
never sent, nor folded into the summary. Both are whole turns, set on the turn with who and when.
"""
from dataclasses import dataclass, field

from sqlalchemy import func, select

from ..extensions import db
from ..llm import as_sent
from ..local_time import when_text
from ..models import Turn, utcnow
from .plans import DROPPED, EXCLUDED, PINNED, Policy, TurnFate
from .tail import COLUMNS, FINISHED_BEFORE, NO_LIMIT, TailTurn

MARKS = ("pinned", "excluded")
MAX_PINS = 50  # pins are read on every request: a bound keeps that cheap
PINS_OVER_BUDGET = "pinned, but the pins alone exceed the history budget: only the newest pins that fit are sent"


class MarkError(ValueError):
    """A pin or leave-out we refuse; the text says why."""


@dataclass
class Marks:
    """A conversation's marked turns before a seq: pins as turns (newest first), the rest by seq."""
    pins: list = field(default_factory=list)
    excluded: dict[int, str] = field(default_factory=dict)  # seq -> "left out by … on …"
    pinned_by: dict[int, str] = field(default_factory=dict)  # seq -> "pinned by … on …"

    @property
    def seqs(self) -> set[int]:
        return {t.seq for t in self.pins} | set(self.excluded)

    def __bool__(self) -> bool:
        return bool(self.pins or self.excluded)


def who_and_when(verb: str, name: str, at) -> str:
    by = f" by {name}" if name else ""
    return f"{verb}{by} on {when_text(at)}" if at else f"{verb}{by}"  # the reader's zone


# The tail's columns plus the mark's, through ix_turns_marked: built once, like the tail.
MARKED = (select(*COLUMNS, Turn.mark, Turn.marked_by_name, Turn.marked_at)
          .where(*FINISHED_BEFORE, Turn.mark.is_not(None)).order_by(Turn.seq.desc()))


def marks_of(conversation, before_seq: int | None = None) -> Marks:
    """The marked finished turns before `before_seq`; nothing is queried for a conversation that
    never had one."""
    if not getattr(conversation, "has_marks", False):
        return Marks()
    rows = db.session.connection().execute(MARKED, {
        "conversation_id": conversation.id,
        "before_seq": before_seq if before_seq is not None else NO_LIMIT}).all()
    marks = Marks()
    for row in rows:
        *columns, mark, name, at = row
        if mark == "pinned":
            marks.pins.append(TailTurn(columns))
            marks.pinned_by[row[1]] = who_and_when("pinned", name, at)
        else:
            marks.excluded[row[1]] = who_and_when("left out", name, at)
    return marks


def place_pins(marks: Marks, policy: Policy, ratio: float) -> tuple[dict[int, TurnFate], int, bool]:
    """Each pin, newest first, in full if it fits what is left of the budget, else as question
    and answer, else not sent; (fates by seq, tokens the pins take, whether some did not fit)."""
    budget = max(max(policy.budget - policy.reserved, policy.budget // 2), 0)
    placed: dict[int, TurnFate] = {}
    used, over = 0, False
    for turn in marks.pins:
        why = marks.pinned_by.get(turn.seq, "pinned")
        full, compact = round(turn.full_tokens * ratio), round(turn.compact_tokens * ratio)
        if used + full <= budget:
            fate = TurnFate(turn.seq, PINNED, f"{why}: kept in full", as_sent(turn.messages),
                             full, "full")
        elif used + compact <= budget:
            fate = TurnFate(turn.seq, PINNED, f"{why}: question and answer only, as the "
                            "budget demands", turn.compact, compact, "compact")
        else:
            placed[turn.seq], over = TurnFate(turn.seq, DROPPED, PINS_OVER_BUDGET), True
            continue
        placed[turn.seq], used = fate, used + fate.tokens
    for seq, why in marks.excluded.items():
        placed[seq] = TurnFate(seq, EXCLUDED, why)
    return placed, used, over


def set_mark(turn: Turn, mark: str | None, user) -> None:
    """Pin a finished turn, leave it out, or clear either (`mark` None); committed by the caller."""
    if mark is not None and mark not in MARKS:
        raise MarkError(f"unknown mark {mark!r}; choose from {', '.join(MARKS)} or none")
    if turn.outcome == "pending":
        raise MarkError("This turn is still being answered; pin or leave it out once it is done.")
    if mark == "pinned" and turn.mark != "pinned":
        pins = db.session.scalar(select(func.count()).where(
            Turn.conversation_id == turn.conversation_id, Turn.mark == "pinned"))
        if pins >= MAX_PINS:
            raise MarkError(f"A conversation can have at most {MAX_PINS} pinned turns; "
                            "unpin one first.")
    turn.mark = mark
    turn.marked_by = user.id if mark and user is not None else None
    turn.marked_by_name = (user.name or user.email) if mark and user is not None else ""
    turn.marked_at = utcnow() if mark else None
    if mark:
        turn.conversation.has_marks = True

