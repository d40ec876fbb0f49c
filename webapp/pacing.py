"""Background work makes way for replies: an import or an embedding run rests between its
batches while a reply is being written, so the chats get the CPU and SQLite's write lock first.

The worker already runs at a lower CPU priority (worker.py), but a low-priority process that
holds the write lock makes every chat's write wait the longer (bench/import_under_load.py: a
60 MB import took the chatters' first-token p95 from 530 ms to 2.3 s). Resting REST_SHARE times
what a batch took, while replies are pending, leaves the chats at least three quarters of the
time; with nobody chatting the work goes at full speed.
"""
import time
from datetime import timedelta

from flask import current_app
from sqlalchemy import select

from .extensions import db
from .models import Turn, utcnow

REST_SHARE = 3.0  # rest this many times the batch's own time while replies are being written
MAX_REST = 2.0  # seconds after one batch: the work goes on, if slowly, under any chat load
LOOK_EVERY = 0.05  # seconds between looks for replies still being written


def replies_pending() -> bool:
    """Whether any reply is being written now (one index look, on its own connection). A pending
    turn whose lease ran out has no writer (its server is gone): it never slows the work."""
    alive = utcnow() - timedelta(seconds=current_app.config["NIMBUS_LEASE_SECONDS"])
    with db.engine.connect() as connection:
        return connection.execute(select(Turn.id).where(
            Turn.outcome == "pending", Turn.heartbeat_at >= alive).limit(1)).first() is not None


def checkpoint() -> tuple[int, int] | None:
    """SQLite: copy the write-ahead log into the file now, on the batch job's own time; (pages
    in the log, pages copied). Left to SQLite, the copy runs inside whichever commit finds the
    log over 1,000 pages, and a chat's commits are the most frequent: a chat would wait while
    the import's pages are written back."""
    if db.engine.dialect.name != "sqlite":
        return None
    with db.engine.connect() as connection:
        _, pages, copied = connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()
    return pages, copied


class Pace:
    """Rests a batch job between its batches: `pace.batch_done()` after each commit."""

    def __init__(self):
        self.started, self.rested = time.monotonic(), 0.0

    def batch_done(self) -> None:
        """Write the batch back into the database file, then rest while replies are pending, up
        to REST_SHARE times this batch's own time."""
        checkpoint()
        now = time.monotonic()
        rest = min(MAX_REST, REST_SHARE * (now - self.started))
        until = now + rest
        while time.monotonic() < until and replies_pending():
            time.sleep(min(LOOK_EVERY, max(until - time.monotonic(), 0)))
        self.rested += time.monotonic() - now
        self.started = time.monotonic()
