"""Counts that no view decorator can keep: new guests per address (made before any view runs),
failed sign-ins per account and address. In Redis with REDIS_URL, else in a SQLite file beside the
database (NIMBUS_LIMITS_DB): either way shared by every worker. While the storage is down they
count in this process's memory, never a 500."""
import logging
import math
import os
import time

from flask import current_app
from limits import parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

log = logging.getLogger(__name__)
RETRY_STORAGE_SECONDS = 30  # after a failed call, memory counts this long before Redis is tried


class Counters:
    """Moving-window counters under one key prefix, with an in-memory stand-in for outages."""

    def __init__(self, uri: str, prefix: str):
        self.primary = MovingWindowRateLimiter(storage_from_string(uri))
        self.fallback = MovingWindowRateLimiter(MemoryStorage())
        self.prefix = prefix
        self.down_until = 0.0

    def call(self, method: str, *args):
        if time.monotonic() >= self.down_until:
            try:
                return getattr(self.primary, method)(*args)
            except Exception as error:  # Redis refused or timed out: count here meanwhile
                log.warning("counter storage unreachable, counting in memory: %s", error)
                self.down_until = time.monotonic() + RETRY_STORAGE_SECONDS
        return getattr(self.fallback, method)(*args)

    def spend(self, limits: str, *key: str) -> int | None:
        """Count one if every limit has room and return None; else the seconds to wait, and
        nothing is counted."""
        items = parse_many(limits)
        for item in items:
            if not self.call("test", item, self.prefix, *key):
                stats = self.call("get_window_stats", item, self.prefix, *key)
                return max(1, math.ceil(stats.reset_time - time.time()))
        for item in items:
            self.call("hit", item, self.prefix, *key)
        return None

    def spent(self, limits: str, *key: str) -> bool:
        """True when one of the limits has no room left."""
        return any(not self.call("test", item, self.prefix, *key) for item in parse_many(limits))

    def forget(self, limits: str, *key: str) -> None:
        for item in parse_many(limits):
            self.call("clear", item, self.prefix, *key)


def counters() -> Counters:
    return current_app.extensions["nimbus_counters"]


def storage_uri(app) -> str:
    """Where every limit counts: Redis, else a SQLite file that all workers of this machine open
    (in each worker's memory the limits counted per worker: with two, twice as loose). Tests
    count in memory unless they name a file; NIMBUS_LIMITS_DB=memory does so too."""
    if app.config.get("REDIS_URL"):
        return app.config["REDIS_URL"]
    path = app.config.get("NIMBUS_LIMITS_DB")
    if path == "memory" or (path is None and app.config.get("TESTING")):
        return "memory://"
    from .shared_counts import SQLiteStorage  # its import registers its scheme with `limits`
    path = path or os.path.join(app.instance_path, "limits.db")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return f"{SQLiteStorage.STORAGE_SCHEME[0]}://{os.path.abspath(path)}"


def init_app(app) -> None:
    prefix = f"{app.config.get('RATELIMIT_KEY_PREFIX') or 'nimbus-limits'}-counters"
    app.extensions["nimbus_counters"] = Counters(storage_uri(app), prefix)
