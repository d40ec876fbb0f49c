"""Rate-limit counts in a SQLite file, for the default deployment (no Redis, several workers on one
machine): in each worker's memory the lock-out and the per-address limits counted per worker, so
the first 429 came at the 17th failure, not the 11th, and a locked-out password worked on the
other worker. A `limits` storage (moving windows and fixed counters), registered as
`nimbus-sqlite:///path`, so Flask-Limiter and security/counters.py use it by its URI.
"""
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
        self.local = threading.local()
        self.writes = 0
        self.connection().executescript(SCHEMA)  # its own transaction

    @property
    def base_exceptions(self):
        return sqlite3.Error

    def connection(self) -> sqlite3.Connection:
        db = getattr(self.local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # counts, not records: no fsync per hit
            self.local.db = db
        return db

    def transaction(self):
        return Transaction(self.connection())

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        with self.transaction() as db:
            db.execute("DELETE FROM counts WHERE key = ? AND expires <= ?", (key, now))
            db.execute("INSERT INTO counts (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key)"
                       " DO UPDATE SET value = value + excluded.value", (key, amount, now + expiry))
            self.swept(db, now)
            return db.execute("SELECT value FROM counts WHERE key = ?", (key,)).fetchone()[0]

    def get(self, key: str) -> int:
        row = self.connection().execute("SELECT value FROM counts WHERE key = ? AND expires > ?",
                                        (key, time.time())).fetchone()
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        row = self.connection().execute("SELECT expires FROM counts WHERE key = ? AND expires > ?",
                                        (key, time.time())).fetchone()
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
            self.connection().execute("SELECT 1").fetchone()
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
        oldest, taken = self.connection().execute(
            "SELECT min(at), count(*) FROM hits WHERE key = ? AND at >= ?",
            (key, now - expiry)).fetchone()
        return (oldest, taken) if taken else (now, 0)

    def swept(self, db: sqlite3.Connection, now: float) -> None:
        """Now and then, drop the counts of keys nobody has used lately (an address gone)."""
        self.writes += 1
        if self.writes % SWEEP_EVERY == 0:
            db.execute("DELETE FROM counts WHERE expires <= ?", (now,))
            db.execute("DELETE FROM hits WHERE at < ?", (now - KEEP_SECONDS,))


class Transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on an error): the write lock is taken before reading."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, error, trace) -> None:
        self.db.execute("ROLLBACK" if kind else "COMMIT")
