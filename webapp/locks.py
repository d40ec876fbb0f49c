"""Named locks as leases, so two workers, on one host or many, never share a conversation or a job.

A lock lasts `NIMBUS_LEASE_SECONDS` unless its holder renews it: a worker that dies frees its
locks within seconds. Rows in the database by default (SQLite and PostgreSQL alike); Redis locks
when REDIS_URL is set, as a fleet of web workers would use.
"""
import functools
import logging
import secrets
import threading
import time
from contextlib import contextmanager
from datetime import timedelta

from flask import current_app
from sqlalchemy import delete, insert, update
from sqlalchemy.exc import IntegrityError

from .extensions import db
from .models import Lock, utcnow
from .security import redis_outages

log = logging.getLogger(__name__)


class LockBusy(RuntimeError):
    """Somebody else holds the lock and did not let go in time."""


class Lease:
    """A held lock; `renew()` pushes its end another `ttl` seconds out."""

    def __init__(self, name: str, owner: str, ttl: float, redis_lock=None):
        self.name, self.owner, self.ttl, self.redis_lock = name, owner, ttl, redis_lock

    def renew(self) -> None:
        renew_all([self])


@functools.cache
def redis_client(url: str):
    """One client (and connection pool) per process and URL."""
    import redis
    return redis.Redis.from_url(url)


def try_acquire(name: str, ttl: float, commit: bool = True) -> str | None:
    """Take the lock if free (or its lease ran out) and return its owner token; None if held.
    With `commit` False the lock's row is written but left in the open transaction."""
    owner = secrets.token_hex(8)
    now = utcnow()
    db.session.rollback()  # a short transaction of its own, whatever the caller read before
    row = insert(Lock).values(name=name, owner=owner, expires_at=now + timedelta(seconds=ttl))
    for clear_first in (False, True):  # the usual lock is free: one INSERT, on the way to a reply
        try:
            if clear_first:  # a lock past its lease belongs to a worker that died
                db.session.execute(delete(Lock).where(Lock.name == name, Lock.expires_at < now))
            db.session.execute(row)
            if commit:
                db.session.commit()
            return owner
        except IntegrityError:
            db.session.rollback()
    return None


def acquire(name: str, wait: float = 0, ttl: float | None = None) -> Lease:
    """Take the lock, waiting up to `wait` seconds (0: give up at once), else raise LockBusy."""
    ttl = ttl or current_app.config["NIMBUS_LEASE_SECONDS"]
    url = current_app.config.get("REDIS_URL")
    if url:
        # Not thread-local: the worker's heartbeat renews it from another thread.
        lock = redis_client(url).lock(f"nimbus:lock:{name}", timeout=ttl, thread_local=False,
                                      blocking_timeout=wait if wait > 0 else None)
        if not lock.acquire(blocking=wait > 0):
            raise LockBusy(name)
        return Lease(name, lock.local.token, ttl, lock)
    deadline = time.monotonic() + wait
    while (owner := try_acquire(name, ttl)) is None:
        if time.monotonic() >= deadline:
            raise LockBusy(name)
        time.sleep(0.05)
    return Lease(name, owner, ttl)


def release(lease: Lease) -> None:
    if lease.redis_lock is not None:
        import redis
        try:
            lease.redis_lock.release()
        except redis.exceptions.LockError:  # the lease ran out: nothing left to release
            pass
        except redis_outages() as error:  # Redis is down: the lock ends with its TTL, or with it
            log.warning("could not release lock %s: redis unavailable: %s", lease.name, error)
        return
    db.session.rollback()  # the holder may leave mid-transaction; its work is already committed
    db.session.execute(delete(Lock).where(Lock.name == lease.name, Lock.owner == lease.owner))
    db.session.commit()


def renew_all(leases: list[Lease]) -> None:
    """Renew many leases at once: one UPDATE for the database's, one call each for Redis's."""
    rows = [lease for lease in leases if lease.redis_lock is None]
    if rows:
        db.session.rollback()
        expires = utcnow() + timedelta(seconds=rows[0].ttl)
        db.session.execute(update(Lock).where(Lock.owner.in_([lease.owner for lease in rows]))
                           .values(expires_at=expires))
        db.session.commit()
    for lease in leases:
        if lease.redis_lock is not None:
            try:
                renew_in_redis(lease)
            except redis_outages() as error:
                # Redis is down: the database's leases are renewed all the same (a turn's
                # heartbeat row too, so no other worker takes it over), and the lock is taken
                # back at the first beat after Redis returns (empty, if it restarted).
                log.warning("could not renew lock %s: redis unavailable: %s", lease.name, error)


def renew_in_redis(lease: Lease) -> None:
    """Push a Redis lock's end out; one that ran out (a starved worker, a restarted Redis) is
    taken back if nobody took it meanwhile."""
    import redis
    try:
        lease.redis_lock.reacquire()
    except redis.exceptions.LockError:
        lease.redis_lock.acquire(blocking=False, token=lease.owner)


@contextmanager
def renewed(lease: Lease):
    """Keep renewing the lease from a helper thread while the block runs."""
    app, done = current_app._get_current_object(), threading.Event()

    def heartbeat():
        with app.app_context():
            while not done.wait(lease.ttl / 3):
                try:
                    lease.renew()
                except Exception:  # the next beat tries again; the lease outlives one miss
                    db.session.rollback()
            db.session.remove()

    thread = threading.Thread(target=heartbeat, name=f"lease-{lease.name}", daemon=True)
    thread.start()
    try:
        yield lease
    finally:
        done.set()
        thread.join()


@contextmanager
def named_lock(name: str, wait: float | None = None, ttl: float | None = None):
    """Hold the lock for the block, renewed while it runs; wait up to `wait` seconds else LockBusy."""
    lease = acquire(name, 3 * current_app.config["NIMBUS_LEASE_SECONDS"] if wait is None else wait,
                    ttl)
    try:
        with renewed(lease):
            yield lease.owner
    finally:
        release(lease)


@contextmanager
def committed_under(name: str, wait: float, commit=None):
    """Hold the lock while the block's writes are committed, for a short check-then-write (a
    send's "none pending, so append"). A database lock's row is written and deleted inside the
    block's own transaction: one commit, not three (a send waiting behind an import's batch
    waited three times). `commit` commits (db.session.commit by default); a Redis lock is let go
    after it."""
    commit = commit or db.session.commit
    if current_app.config.get("REDIS_URL"):
        with named_lock(name, wait=wait):
            yield
            commit()
        return
    ttl, deadline = current_app.config["NIMBUS_LEASE_SECONDS"], time.monotonic() + wait
    while (owner := try_acquire(name, ttl, commit=False)) is None:
        if time.monotonic() >= deadline:
            raise LockBusy(name)
        time.sleep(0.05)
    try:
        yield
        db.session.execute(delete(Lock).where(Lock.name == name, Lock.owner == owner))
        commit()
    except BaseException:
        db.session.rollback()  # the row with the rest: the lock was never seen held
        raise


def conversation_lock(conversation_id: str, wait: float | None = None):
    return named_lock(conversation_lock_name(conversation_id), wait=wait)


def conversation_lock_name(conversation_id: str) -> str:
    return f"conversation:{conversation_id}"
