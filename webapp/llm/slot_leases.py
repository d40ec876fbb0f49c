"""A provider's slots counted across processes: web workers and the job worker share one budget.

Each process keeps its own queue (calls.PrioritySlots, chats first); a call that gets a place
there then takes one of the endpoint's slots here, as a lease row in the `locks` table (named
`provider:<endpoint>:slot:<n>`, the owner saying whether a chat or a background call holds it),
renewed while the call runs, so a process that dies frees its slot within NIMBUS_LEASE_SECONDS.
Chats go first across processes too: a chat that waits leaves a `waiting` row, and no
background call takes a free slot while one is there; a chat that finds every slot held and
one held by a background call takes that slot over, and the background call, which checks its
lease twice a second, ends its request (the distiller keeps those turns for its next run).
Every statement is a short transaction on a connection of its own: nothing is held open
across a model call.
"""
import logging
import secrets
import threading
import time
from datetime import timedelta

from flask import current_app, has_app_context
from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError, OperationalError

from ..extensions import db
from ..models import Lock, utcnow

log = logging.getLogger(__name__)
BACKGROUND_CHECK = 0.5  # seconds between a background call's looks at its lease
WAIT_STEP = 0.1


class SlotLease:
    """One slot held by this call; `end()` lets it go."""

    def __init__(self, app, name: str, owner: str, ttl: float, on_taken_over=None):
        self.app, self.name, self.owner, self.ttl = app, name, owner, ttl
        self.done = threading.Event()
        self.watcher = threading.Thread(target=self.watch, args=(on_taken_over,), daemon=True,
                                        name=f"slot {name}")
        self.watcher.start()

    def watch(self, on_taken_over) -> None:
        """Renew the lease; a background call whose slot a chat took is ended at once."""
        every = BACKGROUND_CHECK if on_taken_over else self.ttl / 3
        with self.app.app_context():
            while not self.done.wait(every):
                try:
                    with db.engine.begin() as connection:
                        kept = connection.execute(
                            update(Lock).where(Lock.name == self.name, Lock.owner == self.owner)
                            .values(expires_at=utcnow() + timedelta(seconds=self.ttl))).rowcount
                except OperationalError:  # a busy database: the lease outlives one miss
                    continue
                if not kept:
                    if on_taken_over and not self.done.is_set():
                        log.info("provider slot %s taken over by a chat", self.name)
                        on_taken_over()
                    return

    def end(self) -> None:
        self.done.set()
        self.watcher.join(5)  # it may be renewing: once it has stopped, it can end nothing
        try:
            with self.app.app_context(), db.engine.begin() as connection:
                connection.execute(delete(Lock).where(Lock.name == self.name,
                                                      Lock.owner == self.owner))
        except Exception:  # the lease runs out by itself within its ttl
            log.warning("provider slot %s not let go; it frees itself within %.0f s",
                        self.name, self.ttl, exc_info=True)


def take(endpoint: str, size: int, chat: bool, timeout: float, on_taken_over=None,
         progressing=lambda: False) -> SlotLease | None:
    """Take one of the endpoint's `size` slots, waiting behind chats if this is a background
    call; None outside an app (no database to count in). Raises TimeoutError when none came
    within `timeout` and no call holding one is alive (here or in another process: a live
    lease is a call within its deadlines, as calls.PrioritySlots waits on)."""
    if not has_app_context():
        return None
    app = current_app._get_current_object()
    ttl = app.config.get("NIMBUS_LEASE_SECONDS") or 10.0
    prefix = f"provider:{endpoint}:"
    token = secrets.token_hex(8)
    owner = f"{'chat' if chat else 'background'}-{token}"
    waiting = f"{prefix}waiting:{token}"
    deadline = time.monotonic() + timeout
    waited = False  # a chat's `waiting` row may be there: one that took a slot at once wrote none
    try:
        while True:
            try:
                got, held = try_take(prefix, size, owner, chat, waiting, ttl)
            except (OperationalError, IntegrityError):  # busy, or another took it: look again
                got, held = None, 1
            if got:
                return SlotLease(app, got, owner, ttl, None if chat else on_taken_over)
            waited = True
            if time.monotonic() > deadline and not held and not progressing():
                raise TimeoutError("no free slot on the provider")
            time.sleep(WAIT_STEP)
    finally:
        if chat and waited:
            with db.engine.begin() as connection:
                connection.execute(delete(Lock).where(Lock.name == waiting))


def try_take(prefix: str, size: int, owner: str, chat: bool, waiting: str,
             ttl: float) -> tuple[str | None, int]:
    """One look, one transaction: the name of the slot taken (None: none), and how many slots
    live calls hold (IntegrityError: another process took the slot between look and insert)."""
    now = utcnow()
    until = now + timedelta(seconds=ttl)
    with db.engine.begin() as connection:
        rows = connection.execute(select(Lock.name, Lock.owner, Lock.expires_at)
                                  .where(Lock.name.like(f"{prefix}%"))).all()
        if any(expires < now for _, _, expires in rows):  # a process that died: clear its rows
            connection.execute(delete(Lock).where(Lock.name.like(f"{prefix}%"),
                                                  Lock.expires_at < now))
        rows = [(name, holder) for name, holder, expires in rows if expires >= now]
        held = {name: holder for name, holder in rows if name.startswith(f"{prefix}slot:")}
        chats_waiting = any(name.startswith(f"{prefix}waiting:") and name != waiting
                            for name, _ in rows)
        free = [f"{prefix}slot:{n}" for n in range(size) if f"{prefix}slot:{n}" not in held]
        if free and (chat or not chats_waiting):
            connection.execute(insert(Lock).values(name=free[0], owner=owner, expires_at=until))
            return free[0], len(held)
        if chat and not free:
            background = sorted(name for name, holder in held.items()
                                if holder.startswith("background-"))
            if background:  # take it over: its holder sees the owner change and ends its call
                taken = connection.execute(
                    update(Lock).where(Lock.name == background[0],
                                       Lock.owner == held[background[0]])
                    .values(owner=owner, expires_at=until)).rowcount
                if taken:
                    return background[0], len(held)
        if chat:  # it waits: no background call takes a slot before it
            if waiting not in {name for name, _ in rows}:
                connection.execute(insert(Lock).values(name=waiting, owner=owner,
                                                       expires_at=until))
            else:
                connection.execute(update(Lock).where(Lock.name == waiting)
                                   .values(expires_at=until))
    return None, len(held)
