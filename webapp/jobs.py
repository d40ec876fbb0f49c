"""Background jobs on Huey: SQLite-backed by default, Redis when REDIS_URL is set, inline in tests.

Jobs run after the answer has gone out. A job that fails is logged and retried a bounded number
of times; enqueueing never raises into a chat request.
"""
import functools
import logging
import os
from contextlib import nullcontext

from flask import has_app_context
from huey import RedisHuey, SqliteHuey

log = logging.getLogger(__name__)
INSTANCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "instance")


def make_huey():
    """The queue backend is chosen from the environment, as the worker process has no app yet."""
    if os.environ.get("REDIS_URL"):
        return RedisHuey("nimbus", url=os.environ["REDIS_URL"])
    os.makedirs(INSTANCE, exist_ok=True)
    return SqliteHuey("nimbus", filename=os.environ.get("NIMBUS_JOBS_DB")
                      or os.path.join(INSTANCE, "jobs.db"))


huey = make_huey()
_worker_app = None


def init_app(app) -> None:
    """Tests (and NIMBUS_JOBS_IMMEDIATE=1) run jobs inline, synchronously, in the caller's app."""
    huey.immediate = bool(app.config.get("TESTING") or app.config.get("NIMBUS_JOBS_IMMEDIATE"))
    app.extensions["huey"] = huey


def app_context():
    """Inside a request or test reuse the app; in the worker build one app, once."""
    global _worker_app
    if has_app_context():
        return nullcontext()
    if _worker_app is None:
        from . import create_app
        _worker_app = create_app()
    return _worker_app.app_context()


def job(retries: int = 2, retry_delay: int = 10, **task_options):
    """Make a function a Huey task that runs in an app context, retried `retries` times."""
    def wrap(func):
        @huey.task(retries=retries, retry_delay=retry_delay, name=func.__name__, **task_options)
        @functools.wraps(func)
        def task(*args, **kwargs):
            with app_context():
                return func(*args, **kwargs)
        return task
    return wrap


def enqueue(task, *args, **kwargs) -> None:
    """Queue a job; a queue that is down is logged, never raised into the chat."""
    try:
        task(*args, **kwargs)
    except Exception:
        log.exception("could not run or enqueue %s", getattr(task, "name", task))
