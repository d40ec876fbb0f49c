"""Alternatives and forks: a regenerated answer or an edited question starts a new branch at a
turn, the branch it replaced is kept in `turn_alternatives`, and switching swaps them.

The turns table always holds the active path, so the request planner, the viewer, the gauge,
the summary, search and the distiller follow the chosen branch without knowing branches exist.
What was derived from the turns swapped out travels with them: their pins and exclusions (columns
of the turn), the alternatives of their later turns, and a rolling summary that covered any of
them; the summary of the branch coming in is restored, or there is none until the next fold. A
memory learned from them stays, marked as learned on a branch left until it is kept or dropped.
"""
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import DateTime, delete, func, insert, select, update

from .extensions import db
from .locks import LockBusy, conversation_lock
from .models import Conversation, Turn, TurnAlternative
from .context.summary.models import ConversationSummary

TURN_COLUMNS = [c for c in Turn.__table__.columns if c.key != "conversation_id"]
SUMMARY_COLUMNS = [c for c in ConversationSummary.__table__.columns if c.key != "conversation_id"]


class BranchRefused(Exception):
    """Why a branch cannot be started or switched now (a reply is being written); said as is."""


@dataclass
class Versions:
    """The versions of one turn: which place the shown one holds, of how many, and whether they
    differ only in the answer ("answer") or in the question too ("question")."""
    seq: int
    active: int
    total: int
    kind: str

    def others(self) -> list[int]:
        return [p for p in range(1, self.total + 1) if p != self.active]


def versions(conversation_id: str) -> dict[int, Versions]:
    """Every turn of the active path that has alternatives, by seq (one small query)."""
    rows = db.session.execute(select(TurnAlternative.seq, TurnAlternative.position,
                                     TurnAlternative.kind)
                              .where(TurnAlternative.conversation_id == conversation_id)).all()
    found: dict[int, list] = {}
    for seq, position, kind in rows:
        found.setdefault(seq, []).append((position, kind))
    result = {}
    for seq, places in found.items():
        taken = {p for p, _ in places}
        active = next(p for p in range(1, len(taken) + 2) if p not in taken)
        kind = "answer" if all(k == "answer" for _, k in places) else "question"
        result[seq] = Versions(seq, active, len(taken) + 1, kind)
    return result


@dataclass
class Alternative:
    """A version of a turn that is not on the active path, as the viewer shows it: its first
    turn's messages, and how many later turns its branch holds."""
    seq: int
    position: int
    total: int
    kind: str
    messages: list
    later: int
    requested: bool = False  # its turn's request was recorded (a manifest): it can be shown as sent


def alternatives_of(conversation_id: str, seq: int) -> list[Alternative]:
    """The versions of turn `seq` that are not sent, in their order."""
    rows = list(db.session.scalars(select(TurnAlternative).where(
        TurnAlternative.conversation_id == conversation_id, TurnAlternative.seq == seq)
        .order_by(TurnAlternative.position)))
    return [Alternative(seq, row.position, len(rows) + 1, row.kind,
                        row.branch["turns"][0]["messages"], len(row.branch["turns"]) - 1,
                        bool(row.branch["turns"][0].get("manifest")))
            for row in rows]


def kept_turn(conversation_id: str, seq: int, position: int) -> Turn | None:
    """Turn `seq` as version `position` stored it, when that version is not the one shown: a
    Turn never added to the session (the viewer reads it, nothing writes it); None if none."""
    row = db.session.scalar(select(TurnAlternative).where(
        TurnAlternative.conversation_id == conversation_id, TurnAlternative.seq == seq,
        TurnAlternative.position == position))
    if row is None:
        return None
    return Turn(**_values(row.branch["turns"][0], TURN_COLUMNS), conversation_id=conversation_id)


def fork(conversation: Conversation, seq: int, question: str) -> Turn:
    """Keep turn `seq` and every later one as an alternative, and start the question at `seq`
    as a new pending turn (the same question: a regenerated answer; another: an edit)."""
    with _quiet(conversation):
        current = _versions_at(conversation.id, seq)
        old = _turns_from(conversation.id, seq)
        if not old:
            raise BranchRefused("That turn no longer exists: reload the page.")
        kind = "answer" if old[0].question == question else "question"
        _keep(conversation, seq, current.active if current else 1, kind)
        _drop_from(conversation, seq)
        from .storage import start_turn
        return start_turn(conversation, question)  # its commit stores the whole fork at once


def switch(conversation: Conversation, seq: int, position: int) -> None:
    """Show version `position` of turn `seq`: the branch shown now is kept in its place and the
    chosen one comes back as it was stored, in one transaction."""
    with _quiet(conversation):
        swap(conversation, seq, position)
        db.session.commit()


def swap(conversation: Conversation, seq: int, position: int) -> None:
    """The work of a switch, left uncommitted: `switch` commits it; the viewer's compare plans
    the next request on it and rolls it back, so what it shows is what a switch would send."""
    chosen = db.session.scalar(select(TurnAlternative).where(
        TurnAlternative.conversation_id == conversation.id, TurnAlternative.seq == seq,
        TurnAlternative.position == position))
    if chosen is None:
        raise LookupError(position)
    current = _versions_at(conversation.id, seq)
    branch = chosen.branch
    db.session.delete(chosen)
    db.session.flush()
    old = _turns_from(conversation.id, seq)
    if old:
        same = old[0].question == branch["turns"][0]["question"]
        _keep(conversation, seq, current.active, "answer" if same else "question")
        _drop_from(conversation, seq)
    _restore(conversation, seq, branch)


class _quiet:
    """The conversation's lock, held while no reply is being written; refused otherwise."""

    def __init__(self, conversation: Conversation):
        self.conversation, self.lock = conversation, conversation_lock(conversation.id, wait=5)

    def __enter__(self):
        try:
            self.lock.__enter__()
        except LockBusy:
            raise BranchRefused(BUSY) from None
        if answering(self.conversation.id):
            self.lock.__exit__(None, None, None)
            raise BranchRefused(BUSY)
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            db.session.rollback()
        return self.lock.__exit__(*exc)


def answering(conversation_id: str) -> bool:
    """A reply is being written: its branch may not change under it."""
    return db.session.scalar(select(Turn.id).where(Turn.conversation_id == conversation_id,
                                                   Turn.outcome == "pending").limit(1)) is not None


BUSY = "Nimbus is still answering: wait for the reply, or press Stop, then try again."


def _versions_at(conversation_id: str, seq: int) -> Versions | None:
    return versions(conversation_id).get(seq)


def _turns_from(conversation_id: str, seq: int) -> list[Turn]:
    return list(db.session.scalars(select(Turn).where(
        Turn.conversation_id == conversation_id, Turn.seq >= seq).order_by(Turn.seq)))


def _keep(conversation: Conversation, seq: int, position: int, kind: str) -> None:
    """Store the active path from `seq` on, with what belongs to it, as alternative `position`."""
    later = list(db.session.scalars(select(TurnAlternative).where(
        TurnAlternative.conversation_id == conversation.id, TurnAlternative.seq > seq)))
    summaries = list(db.session.scalars(select(ConversationSummary).where(
        ConversationSummary.conversation_id == conversation.id,
        ConversationSummary.through_seq >= seq)))
    branch = {"turns": [_row(t, TURN_COLUMNS) for t in _turns_from(conversation.id, seq)],
              "memories": _leave_memories(conversation, seq),
              "alternatives": [{"seq": a.seq, "position": a.position, "kind": a.kind,
                                "branch": a.branch, "created_at": a.created_at.isoformat()}
                               for a in later],
              "summaries": [_row(s, SUMMARY_COLUMNS) for s in summaries]}
    for row in later + summaries:
        db.session.delete(row)
    db.session.add(TurnAlternative(conversation_id=conversation.id, seq=seq, position=position,
                                   kind=kind, branch=branch))


def _drop_from(conversation: Conversation, seq: int) -> None:
    """Take the active path's turns from `seq` on out of the turns table (they are kept)."""
    db.session.flush()
    db.session.execute(delete(Turn).where(Turn.conversation_id == conversation.id,
                                          Turn.seq >= seq), execution_options={"synchronize_session": "fetch"})
    _recount(conversation, seq)


def _restore(conversation: Conversation, seq: int, branch: dict) -> None:
    ids = [t["id"] for t in branch["turns"] if t.get("id") is not None]
    taken = set(db.session.scalars(select(Turn.id).where(Turn.id.in_(ids)))) if ids else set()
    rows = []
    for stored in branch["turns"]:  # an imported branch has no ids: its turns get new ones
        row = _values(stored, TURN_COLUMNS)
        if row.get("id") in taken:  # its id was given to a turn since (SQLite reuses the highest)
            del row["id"]
        rows.append({**row, "conversation_id": conversation.id})
    for row in rows:  # one by one: a row without its id gets a new one
        db.session.execute(insert(Turn).values(**row))
    for alternative in branch["alternatives"]:
        db.session.add(TurnAlternative(
            conversation_id=conversation.id, seq=alternative["seq"],
            position=alternative["position"], kind=alternative["kind"],
            branch=alternative["branch"],
            created_at=datetime.fromisoformat(alternative["created_at"])))
    _bring_back_memories(conversation, branch.get("memories") or [])
    for stored in branch["summaries"]:
        db.session.add(ConversationSummary(conversation_id=conversation.id,
                                           **_values(stored, SUMMARY_COLUMNS)))
        conversation.has_summary = True
    if any(t.get("mark") for t in branch["turns"]):
        conversation.has_marks = True
    db.session.flush()
    _recount(conversation, seq)


def _leave_memories(conversation: Conversation, seq: int) -> list[int]:
    """Mark what was learned from the path's turns from `seq` on as learned on a branch left
    (the memory panel offers to keep or drop it); their ids travel with the branch."""
    from .memories.models import Memory
    ids = list(db.session.scalars(select(Memory.id).where(
        Memory.conversation_id == conversation.id, Memory.turn_seq >= seq,
        Memory.branch_left == "")))
    if ids:
        db.session.execute(update(Memory).where(Memory.id.in_(ids)).values(branch_left="left"),
                           execution_options={"synchronize_session": "fetch"})
    return ids


def _bring_back_memories(conversation: Conversation, ids: list[int]) -> None:
    """The memories learned on a branch shown again are on the path shown again."""
    from .memories.models import Memory
    if ids:
        db.session.execute(update(Memory).where(Memory.id.in_(ids),
                                                Memory.conversation_id == conversation.id)
                           .values(branch_left=""),
                           execution_options={"synchronize_session": "fetch"})


def _recount(conversation: Conversation, seq: int) -> None:
    """The conversation's counters after its path changed from `seq` on; the distiller reads
    the new turns from there (what it learned before stays, with its turn number)."""
    from .memories.models import DistillCheckpoint
    last, tokens = db.session.execute(select(func.max(Turn.seq), func.sum(Turn.full_tokens))
                                      .where(Turn.conversation_id == conversation.id)).one()
    conversation.turn_count = 0 if last is None else last + 1
    conversation.history_tokens = tokens or 0
    db.session.execute(update(DistillCheckpoint).where(
        DistillCheckpoint.conversation_id == conversation.id,
        DistillCheckpoint.distilled_through_seq >= seq).values(distilled_through_seq=seq - 1))


def _row(obj, columns) -> dict:
    values = {}
    for column in columns:
        value = getattr(obj, column.key)
        values[column.key] = value.isoformat() if isinstance(value, datetime) else value
    return values


def _values(stored: dict, columns) -> dict:
    values = {}
    for column in columns:
        if column.key not in stored:
            continue
        value = stored[column.key]
        if isinstance(column.type, DateTime) and isinstance(value, str):
            value = datetime.fromisoformat(value)
        values[column.key] = value
    return values
