"""Waiting for SQLite's write lock without freezing a gevent worker.

SQLite waits for a lock held by another process (an import's batch, the Huey worker's job)
inside C, in a sleep gevent cannot see: every stream of the web worker stopped until the lock
came free, half a second for a half-second batch. Under gevent, a statement that would start a
write transaction tries the lock at once and, when it is held, sleeps cooperatively and tries
again, until the same 30 s as before.
"""
import sqlite3
import sys
import time

WAIT_SECONDS = 30.0  # what SQLite's own busy timeout was
FIRST_PAUSE, LONGEST_PAUSE = 0.001, 0.02


def monkey_patched() -> bool:
    """Whether this process runs under gevent's patched sleep (gunicorn's gevent worker)."""
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey and monkey.is_module_patched("time"))


def connect_args() -> dict:
    """SQLite's connect arguments for this process: cooperative waits under gevent."""
    if monkey_patched():
        return {"factory": CooperativeConnection, "timeout": 0}
    return {"timeout": WAIT_SECONDS}


def locked(error: sqlite3.OperationalError) -> bool:
    return "database is locked" in str(error) or "database table is locked" in str(error)


class CooperativeCursor(sqlite3.Cursor):
    """A cursor whose first write of a transaction waits for the lock in cooperative sleeps."""

    def execute(self, sql, parameters=()):
        return self._waiting(super().execute, sql, parameters)

    def executemany(self, sql, seq_of_parameters):
        return self._waiting(super().executemany, sql, seq_of_parameters)

    def _waiting(self, run, sql, parameters):
        connection = self.connection
        if connection.in_transaction:  # holds the write lock already, or reads under it
            return run(sql, parameters)
        deadline, pause = time.monotonic() + WAIT_SECONDS, FIRST_PAUSE
        while True:
            try:
                return run(sql, parameters)
            except sqlite3.OperationalError as error:
                if not locked(error) or time.monotonic() >= deadline:
                    raise
                if connection.in_transaction:  # begun for this statement only: nothing in it
                    connection.rollback()
                time.sleep(pause)  # gevent's sleep: the worker's other streams go on
                pause = min(pause * 2, LONGEST_PAUSE)


class CooperativeConnection(sqlite3.Connection):
    def cursor(self, factory=CooperativeCursor):
        return super().cursor(factory)
