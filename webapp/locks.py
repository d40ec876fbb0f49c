"""Named locks so two workers, on one host or many, never share a conversation.

Rows in the database by default (works on SQLite and PostgreSQL alike); Redis locks when
REDIS_URL is set, as a fleet of web workers would use.
"""
import secrets
import time
from contextlib import contextmanager
from datetime import timedelta

from flask import current_app
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from .extensions import db
from .models import Lock, utcnow


class LockBusy(RuntimeError):
    """Somebody else holds the lock and did not let go in time."""


def try_acquire(name: str, ttl: float) -> str | None:
    """Take the lock if free (or stale) and return its owner token; None if somebody holds it."""
    owner = secrets.token_hex(8)
    now = utcnow()
    # A lock past its expiry belongs to a worker that died: clear it first.
    db.session.execute(delete(Lock).where(Lock.name == name, Lock.expires_at < now))
    db.session.add(Lock(name=name, owner=owner, expires_at=now + timedelta(seconds=ttl)))
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return owner


def release(name: str, owner: str) -> None:
    db.session.rollback()  # the holder may leave mid-transaction; its work is already committed
    db.session.execute(delete(Lock).where(Lock.name == name, Lock.owner == owner))
    db.session.commit()


@contextmanager
def redis_lock(url: str, name: str, wait: float, ttl: float):
    import redis
    lock = redis.Redis.from_url(url).lock(f"nimbus:lock:{name}", timeout=ttl,
                                          blocking_timeout=wait if wait > 0 else None)
    if not lock.acquire(blocking=wait > 0):
        raise LockBusy(name)
    try:
        yield lock.local.token
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:  # expired while held: nothing left to release
            pass


@contextmanager
def named_lock(name: str, wait: float | None = None, ttl: float | None = None):
    """Hold the lock for the block; wait up to `wait` seconds (0: give up at once) else LockBusy."""
    ttl = ttl or current_app.config["NIMBUS_LOCK_TIMEOUT"]
    wait = ttl if wait is None else wait
    if current_app.config.get("REDIS_URL"):
        with redis_lock(current_app.config["REDIS_URL"], name, wait, ttl) as token:
            yield token
        return
    deadline = time.monotonic() + wait
    while (owner := try_acquire(name, ttl)) is None:
        if time.monotonic() >= deadline:
            raise LockBusy(name)
        time.sleep(0.05)
    try:
        yield owner
    finally:
        release(name, owner)


def conversation_lock(conversation_id: str, wait: float | None = None):
    return named_lock(f"conversation:{conversation_id}", wait=wait)
