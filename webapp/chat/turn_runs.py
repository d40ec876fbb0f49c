"""Replies written in the background: one agent run per pending turn, watched by any number of streams.

A stream only watches. The run owns the turn: it holds the conversation's lock, and finishes and
saves the turn even when every watcher has gone. Stop (pressed on any process) closes the agent's
generator, which saves the turn as interrupted with a well-formed partial answer.
"""
import logging
import threading
import time
from typing import Iterator

from flask import current_app
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from ..agent.loop import AgentEvent, run_turn
from ..extensions import db
from ..locks import conversation_lock
from ..models import StopRequest, Turn

STOP_POLL_SECONDS = 0.5  # how often a run looks for a Stop pressed on another process
log = logging.getLogger(__name__)


class TurnRun:
    """The agent answering one turn in a background thread, keeping every event for late watchers."""

    def __init__(self, app, turn: Turn, provider):
        self.app, self.provider = app, provider
        self.turn_id, self.conversation_id = turn.id, turn.conversation_id
        self.events: list[AgentEvent] = []
        self.finished = False
        self.changed = threading.Condition()
        self.stopping = threading.Event()
        self.last_stop_poll = 0.0
        self.thread = threading.Thread(target=self.work, name=f"turn-{turn.id}", daemon=True)

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
        with self.app.app_context():
            try:
                with conversation_lock(self.conversation_id):
                    turn = db.session.get(Turn, self.turn_id)
                    if turn is not None and turn.outcome == "pending":  # else: answered elsewhere
                        self.answer(turn)
            except Exception:
                log.exception("the reply to turn %s failed", self.turn_id)
            finally:
                with self.changed:
                    self.finished = True
                    self.changed.notify_all()
                with RUNS_LOCK:
                    runs_of(self.app).pop(self.turn_id, None)
                db.session.remove()

    def answer(self, turn: Turn) -> None:
        events = run_turn(turn, self.provider)
        try:
            for event in events:
                with self.changed:
                    self.events.append(event)
                    self.changed.notify_all()
                if self.stop_requested():
                    break
        finally:
            events.close()  # stopped early: the loop saves the turn as interrupted
            db.session.rollback()
            db.session.execute(delete(StopRequest).where(StopRequest.turn_id == self.turn_id))
            db.session.commit()

    def stop_requested(self) -> bool:
        now = time.monotonic()
        if not self.stopping.is_set() and now - self.last_stop_poll >= STOP_POLL_SECONDS:
            self.last_stop_poll = now
            # Its own connection: the run's session may hold an older snapshot of the database.
            with db.engine.connect() as connection:
                if connection.scalar(select(StopRequest.turn_id)
                                     .where(StopRequest.turn_id == self.turn_id)) is not None:
                    self.stopping.set()
        return self.stopping.is_set()


RUNS_LOCK = threading.Lock()


def runs_of(app) -> dict[int, TurnRun]:
    return app.extensions.setdefault("turn_runs", {})


def run_for(turn: Turn, provider) -> TurnRun:
    """The run writing this turn's reply in this process, started now if there is none."""
    app = current_app._get_current_object()
    with RUNS_LOCK:
        run = runs_of(app).get(turn.id)
        if run is None:
            run = runs_of(app)[turn.id] = TurnRun(app, turn, provider)
            run.thread.start()
    return run


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
        run.stopping.set()


def wait_until_saved(turn_id: int, timeout: float) -> Turn:
    """The turn once its run saved it, or as it stands after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    run = runs_of(current_app).get(turn_id)
    if run is not None:
        run.thread.join(timeout)
    while True:
        db.session.rollback()  # end the snapshot: the run saved the turn through another session
        turn = db.session.get(Turn, turn_id)
        if turn is None or turn.outcome != "pending" or time.monotonic() >= deadline:
            return turn
        time.sleep(0.1)
