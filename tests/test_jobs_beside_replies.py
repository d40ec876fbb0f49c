"""Without a job worker (NIMBUS_JOBS_IMMEDIATE=1, the one-slot set-up), background jobs run on a
thread of the web process after the reply that queued them: the reply ends and the composer is
free while a summary fold or the distiller still waits on the model."""
import threading
import time

import pytest

from webapp import hooks
from webapp.jobs import job

from .support import sse_events, wait_for_replies
from .test_chat import start

RELEASE = threading.Event()
RAN: list = []


@job(retries=0)
def slow_background_job(conversation_id):
    RELEASE.wait(5)  # as long as a fold's model call on a CPU server, here bounded
    RAN.append(conversation_id)


def queue_slow_job(turn, plan):
    from webapp.jobs import enqueue
    enqueue(slow_background_job, turn.conversation_id)


@pytest.fixture
def served_without_worker(app):
    """The app as gunicorn builds it with NIMBUS_JOBS_IMMEDIATE=1, a slow job after each turn."""
    app.config["NIMBUS_JOBS_IMMEDIATE"] = True
    app.testing = False
    RELEASE.clear()
    RAN.clear()
    hooks.AFTER_TURN.append(queue_slow_job)
    yield app
    hooks.AFTER_TURN.remove(queue_slow_job)
    RELEASE.set()
    app.testing = True


def test_the_reply_ends_before_its_background_job(served_without_worker, guest):
    conversation_id, _ = start(guest, "Hello")
    started = time.monotonic()
    events = sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text)
    assert events[-1][0] == "done" and time.monotonic() - started < 3
    wait_for_replies(served_without_worker)
    again = guest.post(f"/c/{conversation_id}/messages", data={"message": "Thanks"})
    assert again.status_code == 200, "the composer takes the next message at once"
    assert RAN == []  # the job is still waiting on its model
    RELEASE.set()
    for _ in range(50):
        if len(RAN) >= 1:
            break
        time.sleep(0.1)
    assert conversation_id in RAN
