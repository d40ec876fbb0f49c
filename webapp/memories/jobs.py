"""Background work of long-term memory: distil on compression, the inactive sweep, turn vectors.

All of it runs after the answer has gone out; memories' init_app registers it (JOBS, and the
after-turn hooks queue_distil and queue_turn_vector).
"""
import logging
from datetime import timedelta

from flask import current_app
from huey import crontab
from sqlalchemy import func, select

from ..plurals import plural
from ..extensions import db
from ..jobs import app_context, enqueue, huey, job
from ..models import Conversation, Turn, utcnow
from ..context import COMPACTED, FULL
from .distiller.distil import distil_conversation
from .search.conversations import embed_turns_in_batches, store_turn_vector
from .search.lost_vectors import without_vector
from .models import DistillCheckpoint, Memory
from .store.rows import set_vectors

log = logging.getLogger(__name__)
SWEEP_BATCH = 200  # conversations per sweep; the next sweep takes the rest


@job()
def distil_job(conversation_id: str, min_messages: int) -> str:
    outcome = distil_conversation(conversation_id, min_messages)
    log.info("distil %s: %s", conversation_id, outcome)
    return outcome


@job()
def embed_turn_job(turn_id: int) -> None:
    turn = db.session.get(Turn, turn_id)
    if turn is not None:
        store_turn_vector(turn, current_app.config)


@job()
def embed_conversation_job(conversation_id: str) -> int:
    """One conversation's vectors (jobs queued before imports queued one job each)."""
    return embed_import_job([conversation_id])


@job()
def embed_import_job(conversation_ids: list[str]) -> int:
    """Vectors for imported conversations' turns and memories: one job per import, in batches
    of one commit each, and only for what has none yet, so a job cut off by a restart (or run
    twice) goes on from where it stopped; how many turns it embedded."""
    done, memories = 0, 0
    for conversation_id in conversation_ids:
        ids = db.session.scalars(without_vector(select(Turn.id)).where(
            Turn.conversation_id == conversation_id).order_by(Turn.seq)).all()
        done += sum(embedded for _, embedded in embed_turns_in_batches(ids, current_app.config))
        waiting = db.session.scalars(select(Memory).where(
            Memory.conversation_id == conversation_id, Memory.embedding.is_(None))).all()
        if waiting:  # an import brings the memories the conversation gave (transfer/memories.py)
            set_vectors(list(waiting), current_app.config)
            db.session.commit()
            memories += len(waiting)
    log.info("embedded %s and %s of %s", plural(done, "turn"), plural(memories, "memory"),
             plural(len(conversation_ids), "imported conversation"))
    return done


def left_the_window(plan) -> bool:
    """True once turns were dropped or summarised away: the history crossed its budget."""
    older = plan.history.older
    return (any(f.fate not in (FULL, COMPACTED) for f in plan.history.fates)
            or (older is not None and older[0] not in (FULL, COMPACTED)))


def queue_distil(turn, plan) -> None:
    """Queue the distiller once turns leave the window (with the configured floor)."""
    config = current_app.config
    if config["NIMBUS_MEMORY_DISTIL_ON_COMPRESS"] and left_the_window(plan):
        enqueue(distil_job, turn.conversation_id, config["NIMBUS_MEMORY_MIN_MESSAGES"])


def queue_turn_vector(turn, plan) -> None:
    """Queue the turn's vector, so conversation search finds it by meaning."""
    if current_app.config.get("NIMBUS_MEMORY_SEARCH"):
        enqueue(embed_turn_job, turn.id)


def inactive_conversations(config, now=None) -> list[str]:
    """Conversations idle for the configured minutes with turns the distiller has not read."""
    cutoff = (now or utcnow()) - timedelta(minutes=config["NIMBUS_MEMORY_INACTIVE_MINUTES"])
    read_through = func.coalesce(DistillCheckpoint.distilled_through_seq, -1)
    return list(db.session.scalars(
        select(Conversation.id)
        .outerjoin(DistillCheckpoint, DistillCheckpoint.conversation_id == Conversation.id)
        .where(Conversation.updated_at < cutoff, Conversation.turn_count > 0,
               read_through < Conversation.turn_count - 1)
        .order_by(Conversation.updated_at).limit(SWEEP_BATCH)))


def sweep(config, run=None) -> list[tuple[str, str]]:
    """Distil every inactive conversation with a floor of one new message: there is no later
    chance. `run` distils inline (the CLI); by default each one is queued."""
    done = []
    for conversation_id in inactive_conversations(config):
        if run is None:
            enqueue(distil_job, conversation_id, 1)
            done.append((conversation_id, "queued"))
        else:
            done.append((conversation_id, run(conversation_id, 1)))
    return done


@huey.periodic_task(crontab(minute="*/5"), name="distil_inactive_sweep")
def distil_inactive_sweep() -> None:
    with app_context():
        if current_app.config["NIMBUS_MEMORY_SWEEP"]:
            log.info("memory sweep: %s queued", plural(len(sweep(current_app.config)), "conversation"))


JOBS = (distil_job, embed_turn_job, embed_conversation_job, embed_import_job, distil_inactive_sweep)
