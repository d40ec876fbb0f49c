"""Replies written in the background: one agent run per pending turn, watched by any number of streams.

A stream only watches. The run owns the turn: it holds the conversation's lease (renewed, with
its words checkpointed, by the worker's heartbeat in heartbeat.py), and finishes and saves the
turn even when every watcher has gone. Stop (pressed on any process) closes the agent's
generator, which saves the turn as interrupted with a well-formed partial answer. A turn whose
run died is taken over: closed with the words it had, or answered if it had none.
"""
import logging
import threading
import time
from typing import Iterator

from flask import current_app
from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import joinedload
from sqlalchemy.exc import IntegrityError

from .. import locks
from ..agent import FALLBACK_INTERRUPTED, AgentEvent, partial_messages, run_turn
from ..extensions import db
from ..local_time import RUN_ZONE
from ..llm import assistant_message
from ..models import Conversation, StopRequest, Turn, utcnow
from ..security import redis_outages
from ..storage import finish_turn
from .admission import RUNS_LOCK, runs_of, slots_of

TAKEN_OVER = "taken over: the worker writing this reply stopped"
GAVE_UP = "closed: taking over this reply failed every time"

CHECKPOINT = update(Turn.__table__).where(Turn.__table__.c.id == bindparam("turn"),
                                          Turn.__table__.c.outcome == "pending")
LOCK_POLL_SECONDS = 1.0  # how often a run waiting on another worker's run looks again
OUTAGE_WAIT_SECONDS = 120.0  # how long a run waits for Redis's lock to answer, then fails
log = logging.getLogger(__name__)


class TurnRun:
    """The agent answering one turn in a background thread, keeping every event for late watchers."""

    def __init__(self, app, turn_id: int, conversation_id: str, provider,
                 lease: locks.Lease | None = None, zone: str | None = None):
        self.app, self.provider = app, provider
        self.zone = zone  # the reader's, for dates in tool calls ("on March 14")
        self.turn_id, self.conversation_id = turn_id, conversation_id
        self.events: list[AgentEvent] = []
        self.finished = False
        self.changed = threading.Condition()
        self.stopping = threading.Event()
        self.stop_seen = 0.0  # when this worker learnt of the Stop (monotonic)
        self.saved = threading.Event()  # the turn is saved: by the run, or for it on a Stop
        self._claim_lock, self._claimed = threading.Lock(), False
        self.lease = lease  # taken already by a worker taking the turn over
        self.taking_over = lease is not None
        self.progress: dict = {"claim": self.claim_save}  # the loop's live messages and words
        self.checkpointed = (1, 0)
        self.thread = threading.Thread(target=self.work, name=f"turn-{turn_id}", daemon=True)

    def stop(self) -> None:
        """Ask the run to end early; it notices at its next event (the heartbeat saves the turn
        for it if that event is slow to come)."""
        if not self.stopping.is_set():
            self.stop_seen = time.monotonic()
            self.stopping.set()
            if self.thread.ident is not None:
                self.provider.cancel(self.thread.ident, "stopped")  # the upstream request ends now

    def claim_save(self) -> bool:
        """True once: whoever claims first (the run, or the heartbeat on a Stop) saves the turn."""
        with self._claim_lock:
            claimed, self._claimed = self._claimed, True
        return not claimed

    def saved_for_stop(self) -> None:
        """The heartbeat saved the stopped turn: the run's watchers end now, its lease goes."""
        lease, self.lease = self.lease, None
        if lease is not None:
            locks.release(lease)
        self.saved.set()
        with self.changed:
            self.finished = True
            self.changed.notify_all()

    def follow(self, heartbeat: float = 15.0) -> Iterator[AgentEvent | None]:
        """Every event so far, then each new one; None after `heartbeat` seconds of silence."""
        seen = 0
        while True:
            with self.changed:
                if seen == len(self.events) and not self.finished:
                    self.changed.wait(heartbeat)
                new, finished = self.events[seen:], self.finished
            seen += len(new)
            yield from new or ([] if finished else [None])
            if finished:
                return

    def work(self) -> None:
        RUN_ZONE.set(self.zone)
        with self.app.app_context():
            try:
                self.lease = self.lease or self.take_lease()
                if self.lease is not None:
                    try:
                        with slots_of(self.app):
                            self.write()
                    finally:
                        lease, self.lease = self.lease, None
                        locks.release(lease)
            except Exception:
                log.exception("the reply to turn %s failed", self.turn_id)
                if self.taking_over:  # counted: the heartbeat gives up on it after a few
                    failed = self.app.extensions.setdefault("failed_takeovers", {})
                    failed[self.turn_id] = failed.get(self.turn_id, 0) + 1
            finally:
                self.saved.set()
                with self.changed:
                    self.finished = True
                    self.changed.notify_all()
                with RUNS_LOCK:
                    runs_of(self.app).pop(self.turn_id, None)
                db.session.remove()

    def take_lease(self) -> locks.Lease | None:
        """The conversation's lease once free; None once the turn was written elsewhere. While
        Redis (its locks) is down the run waits for it, up to OUTAGE_WAIT_SECONDS: the stream
        keeps its "still writing" beats, and the reply comes once Redis answers."""
        name = locks.conversation_lock_name(self.conversation_id)
        outage_until = None
        while True:
            try:
                return locks.acquire(name, wait=0)
            except locks.LockBusy:
                pass
            except redis_outages() as error:
                if outage_until is None:
                    log.warning("turn %s waits for redis: %s", self.turn_id, error)
                    outage_until = time.monotonic() + OUTAGE_WAIT_SECONDS
                elif time.monotonic() > outage_until:
                    raise
            time.sleep(LOCK_POLL_SECONDS)
            outcome = db.session.scalar(select(Turn.outcome).where(Turn.id == self.turn_id))
            db.session.commit()
            if outcome != "pending":
                return None

    def write(self) -> None:
        db.session.rollback()
        # One read: the turn, its conversation with the shop and the person its request names,
        # and a Stop pressed already (not four reads on the way to the first word).
        turn, stop_pressed = db.session.execute(
            select(Turn, StopRequest.turn_id).outerjoin(StopRequest, StopRequest.turn_id == Turn.id)
            .options(joinedload(Turn.conversation).joinedload(Conversation.tenant),
                     joinedload(Turn.conversation).joinedload(Conversation.user))
            .where(Turn.id == self.turn_id)).first() or (None, None)
        if turn is None or turn.outcome != "pending":  # answered elsewhere meanwhile
            return
        if len(turn.messages) > 1:  # a run that died checkpointed words: keep them, close it
            close_turn(turn, turn.messages)
            return
        if stop_pressed is not None:
            self.stop()
        events = run_turn(turn, self.provider, progress=self.progress)
        try:
            for event in events:
                if event.kind == "token" and self.checkpointed[1] == 0:
                    self.checkpoint_now()
                with self.changed:
                    self.events.append(event)
                    self.changed.notify_all()
                if self.stopping.is_set():
                    break
        finally:
            events.close()  # stopped early: the loop saves the turn as interrupted
            db.session.rollback()
            db.session.execute(delete(StopRequest).where(StopRequest.turn_id == self.turn_id))
            db.session.commit()

    def checkpoint_now(self) -> None:
        """Store the step's first words before anyone sees them: a worker that dies before its
        heartbeat's first beat still leaves them to the run that takes the turn over."""
        snapshot = self.snapshot()
        if snapshot is None:
            return
        # One prepared statement on a connection of its own (the run holds no transaction
        # while the model speaks): a quarter of the ORM update's time, and these are the
        # only writes between the model's first word and the person's.
        with db.engine.begin() as connection:
            connection.execute(CHECKPOINT, {"turn": self.turn_id, "messages": snapshot,
                                            "heartbeat_at": utcnow()})

    def snapshot(self) -> list[dict] | None:
        """The turn as written so far, if it grew since the last checkpoint."""
        messages, streamed = self.progress.get("messages"), self.progress.get("streamed")
        if messages is None or (len(messages), len(streamed)) == self.checkpointed:
            return None
        self.checkpointed = (len(messages), len(streamed))
        return partial_messages(messages, streamed)


def start_run(app, turn_id: int, conversation_id: str, provider, lease=None,
              zone: str | None = None) -> TurnRun:
    """The run writing this turn here, started now if there is none (heartbeat.run_for also
    makes sure the worker's heartbeat beats for it)."""
    with RUNS_LOCK:
        app.extensions.get("admitted", {}).pop(turn_id, None)
        run = runs_of(app).get(turn_id)
        if run is None:
            run = runs_of(app)[turn_id] = TurnRun(app, turn_id, conversation_id, provider, lease,
                                                  zone)
            run.thread.start()
        elif lease is not None:  # already written here: the lease is not needed
            locks.release(lease)
    return run


def close_turn(turn: Turn, messages: list[dict], why: str = TAKEN_OVER) -> None:
    """Close a pending turn nobody writes any more as interrupted, keeping what it had."""
    if len(messages) == 1:
        messages = messages + [assistant_message(FALLBACK_INTERRUPTED)]
    trace = list(turn.trace or []) + [{"kind": "error", "step": 0, "line": why}]
    finish_turn(turn, messages, "interrupted", trace, {}, turn.context_tokens, turn.resend_tokens)


def was_recovered(turn: Turn) -> bool:
    """Whether an interrupted turn was closed for a run that died (nobody pressed Stop)."""
    return turn.outcome == "interrupted" and any(
        step.get("kind") == "error" and step.get("line") in (TAKEN_OVER, GAVE_UP)
        for step in turn.trace or [])


def request_stop(turn: Turn) -> None:
    """Ask the run writing this turn to stop, wherever it runs."""
    if db.session.get(StopRequest, turn.id) is None:
        db.session.add(StopRequest(turn_id=turn.id))
        try:
            db.session.commit()
        except IntegrityError:  # pressed twice at once: one row is enough
            db.session.rollback()
    run = runs_of(current_app).get(turn.id)
    if run is not None:
        run.stop()


def wait_until_saved(turn_id: int, timeout: float) -> Turn:
    """The turn once its run saved it, or as it stands after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    run = runs_of(current_app).get(turn_id)
    if run is not None:
        run.saved.wait(timeout)
    while True:
        db.session.rollback()  # end the snapshot: the run saved the turn through another session
        turn = db.session.get(Turn, turn_id)
        if turn is None or turn.outcome != "pending" or time.monotonic() >= deadline:
            return turn
        time.sleep(0.1)
