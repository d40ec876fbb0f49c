"""Turn vectors that never came, queued again: a turn whose embedding job could not be queued
(Redis down, the queue's file unwritable) or was lost with the queue has no vector, and the
minute's sweep finds it among the newest turns and queues one batched job for it and its like.
Distillation needs no sweep of its own: the next turn queues it again, and the inactive sweep
(jobs.py) reads what a conversation that went quiet still lacks."""
import logging
from datetime import timedelta

from flask import current_app
from huey import crontab
from sqlalchemy import func, or_, select

from ...extensions import db
from ...jobs import app_context, enqueue, huey, job
from ...models import Turn, utcnow
from ...plurals import plural
from .conversations import store_turn_vectors
from ..models import TurnVector

log = logging.getLogger(__name__)
NEWEST_TURNS = 10_000  # turns looked at per sweep, newest first: an outage's are among them
BATCH = 500  # turns queued per sweep; the next sweep takes the rest
SETTLE = timedelta(seconds=30)  # a turn finished this recently may still have its job queued


def without_vector(query):
    return (query.outerjoin(TurnVector, TurnVector.turn_id == Turn.id)
            .where(Turn.outcome != "pending", TurnVector.turn_id.is_(None)))


def turns_without_vectors(now=None, limit: int = BATCH) -> list[int]:
    """The newest finished turns that have waited more than SETTLE and still have no vector,
    oldest first; read above an id (the primary key), so a sweep costs the same on any history."""
    top = db.session.scalar(select(func.max(Turn.id)))
    if top is None:
        return []
    settled = (now or utcnow()) - SETTLE
    return list(db.session.scalars(without_vector(select(Turn.id)).where(
        Turn.id > top - NEWEST_TURNS, or_(Turn.heartbeat_at.is_(None), Turn.heartbeat_at < settled))
        .order_by(Turn.id).limit(limit)))


@job()
def embed_turns_job(turn_ids: list[int]) -> int:
    """Vectors for those of these turns that still have none (a batch may be queued twice)."""
    turns = db.session.scalars(without_vector(select(Turn)).where(Turn.id.in_(turn_ids))).all()
    return store_turn_vectors(list(turns), current_app.config) if turns else 0


def queue_lost_vectors(config, now=None) -> int:
    """Queue one job for the turns whose vector never came; how many (0 with search off)."""
    if not config.get("NIMBUS_MEMORY_SEARCH"):
        return 0
    turn_ids = turns_without_vectors(now)
    if turn_ids:
        enqueue(embed_turns_job, turn_ids)
    return len(turn_ids)


@huey.periodic_task(crontab(minute="*"), name="queue_lost_vectors")
def queue_lost_vectors_every_minute() -> None:
    with app_context():
        if count := queue_lost_vectors(current_app.config):
            log.warning("queued the vectors of %s that had none", plural(count, "turn"))


JOBS = (embed_turns_job, queue_lost_vectors_every_minute)
