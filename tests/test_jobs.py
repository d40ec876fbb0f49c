"""Background jobs hold a lease while they run: a job killed mid-run is queued again, once."""
import logging
import os
import subprocess
import sys
from datetime import timedelta

from webapp.extensions import db
from webapp.jobs import huey, job, requeue_crashed_jobs
from webapp.llm import GAVE_WAY, ProviderCancelled
from webapp.models import JobRun, utcnow

from .fakes.crash_job import noted_job

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die_mid_job(app, notes) -> int:
    """Run the job in another process that is killed half-way through it."""
    code = ("from webapp import create_app\n"
            "from tests.fakes.crash_job import noted_job\n"
            f"app = create_app({{'TESTING': True, 'DATABASE_URL': {app.config['DATABASE_URL']!r}}})\n"
            "with app.app_context():\n"
            f"    noted_job({str(notes)!r})\n")
    env = dict(os.environ, NIMBUS_TEST_DIE_MID_JOB="1")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env).returncode


def test_a_job_killed_mid_run_is_run_again_once_its_lease_ends(app, tmp_path):
    notes = tmp_path / "notes"
    assert die_mid_job(app, notes) == 9
    assert db.session.scalar(db.select(JobRun.attempts)) == 1
    assert requeue_crashed_jobs() == []  # its lease still runs: it might be alive
    lease_ended = utcnow() + timedelta(seconds=app.config["NIMBUS_LEASE_SECONDS"] + 1)
    assert len(requeue_crashed_jobs(now=lease_ended)) == 1
    assert notes.read_text() == "started\nstarted\nfinished\n"
    assert db.session.scalar(db.select(db.func.count()).select_from(JobRun)) == 0
    assert requeue_crashed_jobs(now=lease_ended) == []  # done: never run a third time


def test_a_job_running_on_another_worker_is_not_run_twice(app, tmp_path):
    notes = tmp_path / "notes"
    assert die_mid_job(app, notes) == 9  # its lease is live, as a running job's would be
    noted_job(str(notes))
    assert notes.read_text() == "started\n"


def test_a_finished_job_leaves_no_lease(app, tmp_path):
    noted_job(str(tmp_path / "notes"))
    noted_job(str(tmp_path / "notes"))
    assert (tmp_path / "notes").read_text() == "started\nfinished\n" * 2
    assert db.session.scalar(db.select(db.func.count()).select_from(JobRun)) == 0


@job(retries=2, retry_delay=10)
def gives_way_to_a_chat(notes: str):
    with open(notes, "a") as out:
        out.write("asked\n")
    raise ProviderCancelled(GAVE_WAY)


def test_a_job_that_gives_its_slot_to_a_chat_waits_without_using_a_retry_or_logging_an_error(
        app, tmp_path, caplog):
    notes = tmp_path / "notes"
    task = gives_way_to_a_chat.s(str(notes))
    with caplog.at_level(logging.INFO):
        huey.execute(task)
    assert notes.read_text() == "asked\n"
    (again,) = [t for t in huey.scheduled() if t.id == task.id]
    assert again.retries == 2  # still both retries left for real failures
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(GAVE_WAY in r.getMessage() and "runs again in 10 s" in r.getMessage()
               for r in caplog.records)
    huey.flush()
