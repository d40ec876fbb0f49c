"""Each worker's heartbeat: one thread that renews the leases of the runs the worker writes,
checkpoints their words, looks for Stop pressed on other workers, and takes over turns whose
worker died (or that nobody started).

Every check is one short transaction for all of the worker's runs together: a run needs no
second pooled connection, and nothing is held between beats.
"""
import logging
import threading
import time
from datetime import timedelta

from flask import current_app
from sqlalchemy import or_, select, update

from .. import locks
from ..agent import FALLBACK_INTERRUPTED, partial_messages
from ..extensions import db
from ..llm import provider_for
from ..local_time import named_zone
from ..llm import assistant_message, final_answer, user_message
from ..models import StopRequest, Turn, utcnow
from ..security import redis_outages
from .admission import RUNS_LOCK, is_busy, runs_of
from .turn_runs import GAVE_UP, TurnRun, close_turn, start_run
STOPPED_WAITING = "stopped while waiting on the model"
STUCK_AFTER = 1.0  # seconds a stopped run may take to notice before the heartbeat saves for it
MAX_FAILED_TAKEOVERS = 2  # then the turn is closed with its words, never retried forever
TAKE_OVER_BATCH = 20  # stale turns started per beat; the next beat takes the rest
log = logging.getLogger(__name__)


class Heartbeat:
    """Beats while the worker has runs, and a while after, then rests until the next run."""

    def __init__(self, app):
        self.app, self.stopped = app, threading.Event()
        self.thread = threading.Thread(target=self.loop, name="runs-heartbeat", daemon=True)

    def loop(self) -> None:
        config, last_beat, last_busy = self.app.config, 0.0, time.monotonic()
        with self.app.app_context():
            while not self.stopped.wait(config["NIMBUS_STOP_POLL_SECONDS"]):
                runs = list(runs_of(self.app).values())
                try:
                    look_for_stops(runs)
                    save_stuck_stops(runs)
                    if time.monotonic() - last_beat >= config["NIMBUS_HEARTBEAT_SECONDS"]:
                        last_beat = time.monotonic()
                        beat(runs)
                        take_over_stale(self.app)
                except redis_outages() as error:  # the next beat tries again
                    log.warning("the runs' heartbeat: redis unavailable: %s", error)
                    db.session.rollback()
                except Exception:  # a missed beat is retried at the next; leases outlive it
                    log.exception("the runs' heartbeat failed")
                    db.session.rollback()
                finally:
                    db.session.remove()
                if runs:
                    last_busy = time.monotonic()
                elif time.monotonic() - last_busy > 3 * config["NIMBUS_LEASE_SECONDS"]:
                    return


def run_for(turn: Turn, provider) -> TurnRun:
    """The run writing this turn's reply in this process, started now if there is none, with
    the worker's heartbeat beating for it."""
    app = current_app._get_current_object()
    run = start_run(app, turn.id, turn.conversation_id, provider, zone=named_zone())
    ensure_heartbeat(app)
    return run


def ensure_heartbeat(app) -> None:
    with RUNS_LOCK:
        heartbeat = app.extensions.get("runs_heartbeat")
        if heartbeat is None or not heartbeat.thread.is_alive():
            heartbeat = app.extensions["runs_heartbeat"] = Heartbeat(app)
            heartbeat.thread.start()


def stop_heartbeat(app) -> None:
    """End the heartbeat thread now (an app being torn down)."""
    heartbeat = app.extensions.pop("runs_heartbeat", None)
    if heartbeat is not None:
        heartbeat.stopped.set()
        heartbeat.thread.join(10)


def look_for_stops(runs: list[TurnRun]) -> None:
    """One query for every run of the worker: was Stop pressed (on any worker)?"""
    waiting = {run.turn_id: run for run in runs if not run.stopping.is_set()}
    if waiting:
        for turn_id in db.session.scalars(select(StopRequest.turn_id)
                                          .where(StopRequest.turn_id.in_(waiting))).all():
            waiting[turn_id].stop()
        db.session.commit()


def save_stuck_stops(runs: list[TurnRun]) -> None:
    """A run told to stop notices only at its next event; one waiting on a slow provider (no
    first token yet) is saved for it, as Stop would, and writes nothing when it wakes. One
    running a tool is left to finish it: the tool's effect and its result are stored together."""
    now = time.monotonic()
    for run in runs:
        if run.stopping.is_set() and not run.saved.is_set() and now - run.stop_seen >= STUCK_AFTER \
                and not run.progress.get("in_tool") and run.claim_save():
            turn = db.session.get(Turn, run.turn_id)
            if turn is not None and turn.outcome == "pending":
                progress = run.progress
                messages = partial_messages(progress["messages"], progress["streamed"]) \
                    if "messages" in progress else turn.messages
                close_turn(turn, messages, STOPPED_WAITING)
            db.session.commit()
            run.saved_for_stop()


def beat(runs: list[TurnRun]) -> None:
    """Renew the leases of the runs writing, and store the words each wrote since the last beat."""
    writing = [run for run in runs if run.lease is not None]
    if not writing:
        return
    locks.renew_all([run.lease for run in writing])
    pending = Turn.outcome == "pending"  # a turn saved meanwhile is never overwritten
    db.session.execute(update(Turn).where(Turn.id.in_([run.turn_id for run in writing]), pending)
                       .values(heartbeat_at=utcnow())
                       .execution_options(synchronize_session=False))
    for run in writing:
        snapshot = run.snapshot()
        if snapshot is not None:
            db.session.execute(update(Turn).where(Turn.id == run.turn_id, pending)
                               .values(messages=snapshot)
                               .execution_options(synchronize_session=False))
    db.session.commit()


def take_over_stale(app) -> None:
    """Start a run for each pending turn whose lease ran out: its worker died, or never began."""
    cutoff = utcnow() - timedelta(seconds=app.config["NIMBUS_LEASE_SECONDS"])
    stale = db.session.execute(
        select(Turn.id, Turn.conversation_id)
        .where(Turn.outcome == "pending", or_(Turn.heartbeat_at < cutoff, Turn.heartbeat_at.is_(None)))
        .order_by(Turn.id).limit(TAKE_OVER_BATCH)).all()
    db.session.commit()
    for turn_id, conversation_id in stale:
        if turn_id in runs_of(app) or is_busy(app):
            continue
        try:  # only a turn nobody holds: a live run elsewhere keeps its lease
            lease = locks.acquire(locks.conversation_lock_name(conversation_id), wait=0)
        except locks.LockBusy:
            continue
        if app.extensions.get("failed_takeovers", {}).get(turn_id, 0) >= MAX_FAILED_TAKEOVERS:
            give_up(app, turn_id, lease)
            continue
        log.info("taking over turn %s", turn_id)
        start_run(app, turn_id, conversation_id, provider_for(app), lease)


def give_up(app, turn_id: int, lease: locks.Lease) -> None:
    """Close a turn whose takeovers kept failing: its question, and one assistant message with
    the words it had (or the fallback), so it is well formed whatever its checkpoint held."""
    try:
        turn = db.session.get(Turn, turn_id)
        if turn is not None and turn.outcome == "pending":
            words = final_answer(turn.messages or [])
            question = (turn.messages or [user_message(turn.question)])[0]
            log.warning("turn %s: taking over failed %s times; closing it", turn_id,
                        MAX_FAILED_TAKEOVERS)
            close_turn(turn, [question, assistant_message(words or FALLBACK_INTERRUPTED)], GAVE_UP)
        app.extensions["failed_takeovers"].pop(turn_id, None)
    finally:
        locks.release(lease)


def is_abandoned(turn: Turn) -> bool:
    lease = current_app.config["NIMBUS_LEASE_SECONDS"]
    return turn.heartbeat_at is None or turn.heartbeat_at < utcnow() - timedelta(seconds=lease)


def close_if_abandoned(turn: Turn) -> bool:
    """Close a pending turn whose run died (its lease ran out); False while somebody writes it."""
    if turn.outcome != "pending" or not is_abandoned(turn):
        return turn.outcome != "pending"
    try:
        lease = locks.acquire(locks.conversation_lock_name(turn.conversation_id), wait=0)
    except locks.LockBusy:
        return False
    try:
        db.session.refresh(turn)
        if turn.outcome == "pending":
            close_turn(turn, turn.messages)
        return True
    finally:
        locks.release(lease)
