"""Background jobs on Huey: SQLite-backed by default, Redis when REDIS_URL is set, inline in tests.

The queue is configured from the app's config by init_app; the worker (webapp/worker.py) builds
the app with create_app like every other entry point, so it reads the same settings.

Jobs run after the answer has gone out. A job that fails is logged and retried a bounded number
of times; enqueueing never raises into a chat request. A job that starts takes a lease (a
`job_runs` row, renewed while it runs): if its worker is killed, the lease runs out and the
minute's sweep queues the job again. Two workers never run the same job at once, and every job
is idempotent (it brings some state up to date), so a job runs once in effect.
"""
import collections
import functools
import hashlib
import json
import logging
import os
import secrets
import threading
from contextlib import contextmanager, nullcontext
from datetime import timedelta

from flask import current_app, has_app_context
from huey import Huey, crontab
from huey.exceptions import RetryTask
from huey.storage import RedisStorage, SqliteStorage
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from .hooks import JOBS, add  # name → task, so the sweep can queue a crashed job again
from .security import redis_outages

log = logging.getLogger(__name__)
QUEUED = "queued again"  # the owner of a lease the sweep handed back to the queue
MAX_CRASHES = 3  # a job whose worker died this often is given up (and logged)

# Tasks attach to this queue when their modules load; init_app gives it its storage.
huey = Huey("nimbus", immediate=True)
_apps: list = []  # the app jobs run in outside any request: the one the worker built


def storage_for(app) -> tuple[type, dict]:
    """Redis when REDIS_URL is set, else a SQLite file (NIMBUS_JOBS_DB, or the instance folder)."""
    if app.config.get("REDIS_URL"):
        return RedisStorage, {"url": app.config["REDIS_URL"]}
    return SqliteStorage, {"filename": app.config.get("NIMBUS_JOBS_DB")
                           or os.path.join(app.instance_path, "jobs.db")}


def init_app(app) -> None:
    """Configure the queue from the app; tests (and NIMBUS_JOBS_IMMEDIATE=1) run jobs inline,
    synchronously, in the caller's app."""
    huey.storage_class, huey.storage_kwargs = storage_for(app)
    huey.immediate = bool(app.config.get("TESTING") or app.config.get("NIMBUS_JOBS_IMMEDIATE"))
    huey.storage = huey.create_storage()
    app.extensions["huey"] = huey
    _apps[:] = [app]
    _refused.clear()  # jobs an outage refused belong to the queue they were meant for


def register_jobs(*tasks) -> None:
    """The tasks a package runs on the worker, by name (the sweep queues a crashed one again)."""
    for task in tasks:
        add(JOBS, task, name=task.name)


def app_context():
    """Inside a request or test reuse the app; in the worker, the app it built."""
    if has_app_context() or not _apps:
        return nullcontext()
    return _apps[0].app_context()


def job(retries: int = 2, retry_delay: int = 10, **task_options):
    """Make a function a Huey task that runs in an app context under a lease, retried `retries`
    times when it fails and queued again when its worker dies."""
    def wrap(func):
        @huey.task(retries=retries, retry_delay=retry_delay, name=func.__name__, **task_options)
        @functools.wraps(func)
        def task(*args, **kwargs):
            with app_context(), job_lease(func.__name__, args, kwargs) as leased:
                if not leased:
                    log.info("%s%s runs on another worker", func.__name__, args)
                    return None
                try:
                    return func(*args, **kwargs)
                except Exception as error:
                    from .llm import GAVE_WAY
                    if getattr(error, "reason", None) != GAVE_WAY:
                        raise
                    # Chats first (llm/slot_leases.py): giving way is no failure, so it neither
                    # uses up a retry nor logs a traceback; the job waits for a quieter slot.
                    log.info("%s%s %s; it runs again in %d s", func.__name__, args, GAVE_WAY,
                             retry_delay)
                    raise RetryTask(delay=retry_delay) from None
        return task
    return wrap


class JobLease:
    """The lease of one running job (renewed like a lock's by locks.renewed)."""

    def __init__(self, key: str, ttl: float):
        self.key, self.ttl, self.owner, self.name = key, ttl, secrets.token_hex(8), key

    def renew(self) -> None:
        from .models import JobRun, utcnow
        with engine().begin() as connection:
            connection.execute(update(JobRun).where(JobRun.key == self.key, JobRun.owner == self.owner)
                               .values(lease_until=utcnow() + timedelta(seconds=self.ttl)))


def engine():
    """Leases use short connections of their own, whatever the job's session is doing."""
    from .extensions import db
    return db.engine


@contextmanager
def job_lease(name: str, args: tuple, kwargs: dict):
    """Take the job's lease (False: the same job runs elsewhere now), renewed while it runs."""
    from .locks import renewed
    from .models import JobRun, utcnow
    arguments = [list(args), kwargs]
    digest = hashlib.sha1(json.dumps(arguments, sort_keys=True, default=str).encode()).hexdigest()
    lease = JobLease(f"{name}:{digest}", current_app.config["NIMBUS_LEASE_SECONDS"])
    if lease.key in held_here():  # queued again by itself, run inline: it holds the lease
        yield True
        return
    now = utcnow()
    until = now + timedelta(seconds=lease.ttl)
    try:
        with engine().begin() as connection:
            row = connection.execute(select(JobRun).where(JobRun.key == lease.key)).first()
            if row is None:
                connection.execute(JobRun.__table__.insert().values(
                    key=lease.key, name=name, arguments=arguments, owner=lease.owner,
                    attempts=1, lease_until=until))
            elif row.lease_until < now or row.owner == QUEUED:  # its worker died
                connection.execute(update(JobRun).where(JobRun.key == lease.key).values(
                    owner=lease.owner, attempts=row.attempts + 1, lease_until=until))
            else:
                yield False
                return
    except IntegrityError:  # taken by another worker this instant
        yield False
        return
    held_here().add(lease.key)
    try:
        with renewed(lease):
            yield True
    except Exception:
        from .extensions import db
        db.session.rollback()  # nothing half-written may hold the database while the lease ends
        raise
    finally:
        held_here().discard(lease.key)
        with engine().begin() as connection:
            connection.execute(delete(JobRun).where(JobRun.key == lease.key,
                                                    JobRun.owner == lease.owner))


_local = threading.local()


def held_here() -> set:
    """The job leases this thread holds."""
    if not hasattr(_local, "keys"):
        _local.keys = set()
    return _local.keys


def requeue_crashed_jobs(now=None) -> list[str]:
    """Queue again every job whose lease ran out: its worker was killed mid-run."""
    from .models import JobRun, utcnow
    with engine().begin() as connection:
        rows = connection.execute(select(JobRun).where(JobRun.lease_until < (now or utcnow()),
                                                       JobRun.owner != QUEUED).limit(100)).all()
        for row in rows:
            if row.attempts >= MAX_CRASHES or row.name not in JOBS:
                log.error("giving up %s after %d crashed attempts", row.key, row.attempts)
                connection.execute(delete(JobRun).where(JobRun.key == row.key))
            else:
                connection.execute(update(JobRun).where(JobRun.key == row.key).values(owner=QUEUED))
    requeued = []
    for row in rows:
        if row.name in JOBS and row.attempts < MAX_CRASHES:
            log.warning("queueing %s again: its worker died mid-run", row.key)
            args, kwargs = row.arguments
            enqueue(JOBS[row.name], *args, **kwargs)
            requeued.append(row.key)
    return requeued


@huey.periodic_task(crontab(minute="*"), name="requeue_crashed_jobs")
def requeue_crashed_jobs_every_minute() -> None:
    with app_context():
        requeue_crashed_jobs()


def enqueue(task, *args, **kwargs) -> None:
    """Queue a job; a queue that is down is logged, never raised into the chat. Without a
    worker (NIMBUS_JOBS_IMMEDIATE=1) the job runs on a thread of this process, so the reply that
    queued it ends first: run inline, a summary fold held the reply open for its whole model
    call, and the composer refused new messages meanwhile. Tests run jobs inline, in order.
    A job refused because Redis is down is kept here and queued again by the first enqueue
    that gets through (the minute's sweeps find what a restarted worker forgot)."""
    try:
        if runs_beside_replies():
            threading.Thread(target=run_beside, args=(task, args, kwargs), daemon=True,
                             name=f"job {getattr(task, 'name', task)}").start()
            return
        task(*args, **kwargs)
    except redis_outages() as error:
        log.warning("could not enqueue %s: redis unavailable: %s", getattr(task, "name", task),
                    error)
        with _refused_lock:
            _refused.append((task, args, kwargs))
        return
    except Exception:
        log.exception("could not run or enqueue %s", getattr(task, "name", task))
        return
    if _refused:
        queue_refused()


REFUSED_KEPT = 1000  # jobs kept per process while Redis is down; older ones are left to the sweeps
_refused: collections.deque = collections.deque(maxlen=REFUSED_KEPT)
_refused_lock = threading.Lock()


def queue_refused() -> int:
    """Queue again the jobs an outage refused, oldest first, until one is refused again."""
    queued = 0
    while True:
        with _refused_lock:
            if not _refused:
                break
            task, args, kwargs = _refused.popleft()
        try:
            task(*args, **kwargs)
        except redis_outages():
            with _refused_lock:
                _refused.appendleft((task, args, kwargs))
            break
        except Exception:
            log.exception("could not enqueue %s again", getattr(task, "name", task))
        queued += 1
    if queued:
        log.warning("queued %d jobs that Redis's outage had refused", queued)
    return queued


def runs_beside_replies() -> bool:
    """Whether jobs run on threads of the web process (NIMBUS_JOBS_IMMEDIATE outside tests)."""
    app = _apps[0] if _apps else None
    return bool(app and app.config.get("NIMBUS_JOBS_IMMEDIATE") and not app.testing)


def run_beside(task, args: tuple, kwargs: dict) -> None:
    try:
        task(*args, **kwargs)
    except Exception:  # a job's failure is logged; it never reaches a reply
        log.exception("job %s failed", getattr(task, "name", task))
