"""Rate-limit counts in a SQLite file, for the default deployment (no Redis, several workers on one
machine): in each worker's memory the lock-out and the per-address limits counted per worker, so
the first 429 came at the 17th failure, not the 11th, and a locked-out password worked on the
other worker. A `limits` storage (moving windows and fixed counters), registered as
`nimbus-sqlite:///path`, so Flask-Limiter and security/counters.py use it by its URI.
"""
import os
import sqlite3
import threading
import time

from limits.storage import MovingWindowSupport, Storage

SCHEMA = """
CREATE TABLE IF NOT EXISTS counts (key TEXT PRIMARY KEY, value INTEGER NOT NULL,
                                   expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS hits (key TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS hits_by_key ON hits (key, at);
"""
SWEEP_EVERY = 500  # writes between two sweeps of keys nobody has used for a day
KEEP_SECONDS = 86_400  # the longest window in the settings is an hour; a day leaves room


class SQLiteStorage(Storage, MovingWindowSupport):
    """Counts shared by every process that opens the same file; each write is one short
    transaction (BEGIN IMMEDIATE), so two workers never both take the last place in a window."""

    STORAGE_SCHEME = ["nimbus-sqlite"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **_):
        super().__init__(uri, wrap_exceptions=wrap_exceptions)
        self.path = uri.split("://", 1)[1]
        # One connection per process, one statement at a time: under gevent a thread-local one
        # would be a connection per request. A forked worker opens its own (`pid`).
        self.lock = threading.RLock()
        self.db, self.pid = None, None
        self.writes = 0
        with self.lock:
            self.connection().executescript(SCHEMA)  # its own transaction

    @property
    def base_exceptions(self):
        return sqlite3.Error

    def connection(self) -> sqlite3.Connection:
        """This process's connection (the caller holds the lock)."""
        if self.db is None or self.pid != os.getpid():
            self.db = sqlite3.connect(self.path, timeout=5, isolation_level=None,
                                      check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # counts, not records: no fsync per hit
            self.pid = os.getpid()
        return self.db

    def transaction(self):
        return Transaction(self)

    def read(self, sql: str, values: tuple):
        with self.lock:
            return self.connection().execute(sql, values).fetchone()

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        with self.transaction() as db:
            db.execute("DELETE FROM counts WHERE key = ? AND expires <= ?", (key, now))
            db.execute("INSERT INTO counts (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key)"
                       " DO UPDATE SET value = value + excluded.value", (key, amount, now + expiry))
            self.swept(db, now)
            return db.execute("SELECT value FROM counts WHERE key = ?", (key,)).fetchone()[0]

    def get(self, key: str) -> int:
        row = self.read("SELECT value FROM counts WHERE key = ? AND expires > ?", (key, time.time()))
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        row = self.read("SELECT expires FROM counts WHERE key = ? AND expires > ?",
                        (key, time.time()))
        return row[0] if row else time.time()

    def clear(self, key: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM counts WHERE key = ?", (key,))
            db.execute("DELETE FROM hits WHERE key = ?", (key,))

    def reset(self) -> int:
        with self.transaction() as db:
            found = db.execute("SELECT (SELECT count(*) FROM counts) + "
                               "(SELECT count(DISTINCT key) FROM hits)").fetchone()[0]
            db.execute("DELETE FROM counts")
            db.execute("DELETE FROM hits")
        return found

    def check(self) -> bool:
        try:
            self.read("SELECT 1", ())
            return True
        except sqlite3.Error:
            return False

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = time.time()
        with self.transaction() as db:
            db.execute("DELETE FROM hits WHERE key = ? AND at < ?", (key, now - expiry))
            taken = db.execute("SELECT count(*) FROM hits WHERE key = ?", (key,)).fetchone()[0]
            if taken + amount > limit:
                return False
            db.executemany("INSERT INTO hits (key, at) VALUES (?, ?)", [(key, now)] * amount)
            self.swept(db, now)
            return True

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = time.time()
        oldest, taken = self.read("SELECT min(at), count(*) FROM hits WHERE key = ? AND at >= ?",
                                  (key, now - expiry))
        return (oldest, taken) if taken else (now, 0)

    def swept(self, db: sqlite3.Connection, now: float) -> None:
        """Now and then, drop the counts of keys nobody has used lately (an address gone)."""
        self.writes += 1
        if self.writes % SWEEP_EVERY == 0:
            db.execute("DELETE FROM counts WHERE expires <= ?", (now,))
            db.execute("DELETE FROM hits WHERE at < ?", (now - KEEP_SECONDS,))


class Transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on an error) under the process's lock: the file's
    write lock is taken before reading, so no other worker counts in between."""

    def __init__(self, storage: SQLiteStorage):
        self.storage = storage

    def __enter__(self) -> sqlite3.Connection:
        self.storage.lock.acquire()
        try:
            self.db = self.storage.connection()
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.storage.lock.release()
            raise
        return self.db

    def __exit__(self, kind, error, trace) -> None:
        try:
            self.db.execute("ROLLBACK" if kind else "COMMIT")
        finally:
            self.storage.lock.release()
