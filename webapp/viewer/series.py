"""What the viewer needs of every turn, aggregated in SQL so a view costs the same at any length:
the cost series in at most MAX_POINTS buckets, and how many finished turns lie before a seq.
"""
from dataclasses import dataclass

from sqlalchemy import case, func, or_, select

from ..extensions import db
from ..models import Turn

MAX_POINTS = 320  # the chart is 640 units wide: more points than this only overdraw

# What a turn cost, counted the same way on the chart and on the turn's own line: the prompt
# tokens the provider reported over all model calls of the turn, or our estimate of the same.
SENT = func.coalesce(Turn.prompt_tokens, Turn.context_tokens)
RESEND = SENT + Turn.resend_tokens - Turn.context_tokens
# A turn imported from another app made no request here: no reported and no estimated prompt.
# The chart leaves it out rather than plotting a cost of 0.
REQUESTED = or_(Turn.prompt_tokens.is_not(None), Turn.context_tokens > 0)


@dataclass
class CostSeries:
    turns: list[int]  # the last turn number (1-based) of each bucket
    sent: list[int]  # prompt tokens of the bucket's turns, summed
    resend: list[int]  # the same had every earlier turn been resent in full
    counts: list[int]  # turns in each bucket
    unrequested: int = 0  # finished turns left out: imported, they made no request here

    @property
    def turns_per_point(self) -> int:
        return max(self.counts, default=1)


def cost_series(conversation_id: str, turn_count: int) -> CostSeries:
    """Finished turns' costs, one bucket of ceil(turn_count / MAX_POINTS) turns per point."""
    size = max(1, -(-turn_count // MAX_POINTS))
    bucket = Turn.seq // size if size > 1 else Turn.seq
    rows = db.session.execute(
        select(func.max(Turn.seq), func.sum(SENT), func.sum(RESEND), func.count())
        .where(Turn.conversation_id == conversation_id, Turn.outcome != "pending", REQUESTED)
        .group_by(bucket).order_by(bucket)).all()
    unrequested = db.session.scalar(select(func.count()).where(
        Turn.conversation_id == conversation_id, Turn.outcome != "pending", ~REQUESTED))
    return CostSeries([r[0] + 1 for r in rows], [int(r[1] or 0) for r in rows],
                      [int(r[2] or 0) for r in rows], [r[3] for r in rows], unrequested or 0)


def finished_before(conversation_id: str, seq: int, through: int) -> tuple[int, int]:
    """(finished turns before `seq`, those of them at or before `through`): every seq below is a
    turn, so only the few still pending are counted, through the (conversation, outcome) index."""
    if seq <= 0:
        return 0, 0
    covered = min(through, seq - 1) + 1
    pending, pending_covered = db.session.execute(
        select(func.count(), func.sum(case((Turn.seq <= through, 1), else_=0)))
        .where(Turn.conversation_id == conversation_id, Turn.outcome == "pending",
               Turn.seq < seq)).one()
    return seq - pending, covered - int(pending_covered or 0)


def newest_finished(conversation_id: str) -> int:
    """The seq of the newest finished turn; -1 for none."""
    newest = db.session.scalar(select(func.max(Turn.seq)).where(
        Turn.conversation_id == conversation_id, Turn.outcome != "pending"))
    return -1 if newest is None else newest
