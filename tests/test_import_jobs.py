"""An upload at /import is imported by a job: the request only saves the file and answers; the
import's page follows the job's progress, shows its result or why it failed, to its uploader only."""
import io
import os
import re
import sqlite3
from datetime import timedelta

import pytest

from webapp.extensions import db
from webapp.jobs import huey
from webapp.models import Conversation, Import, utcnow
from webapp.transfer import jobs as import_jobs

from .accounts_support import make_account, sign_in
from .test_import_limits import count, jsonl
from .test_transfer_views import upload


@pytest.fixture
def held(monkeypatch):
    """A queue that runs no job until the test says so: [the queued tasks]. The files of the
    imports it never ran are removed afterwards (the instance folder outlives the test)."""
    queued = []
    monkeypatch.setattr(huey, "enqueue", queued.append)
    yield queued
    db.session.rollback()
    for record in db.session.query(Import):
        import_jobs.remove_uploads(record)


def post(client, data: bytes, name="c.jsonl"):
    """The upload's own answer, not followed."""
    from werkzeug.datastructures import FileStorage, MultiDict
    from werkzeug.test import encode_multipart
    boundary, body = encode_multipart(MultiDict([("file", FileStorage(io.BytesIO(data), name))]))
    return client.post("/import", data=body, content_type=f"multipart/form-data; boundary={boundary}")


def uploads(app) -> list[str]:
    """The files of this test's imports still waiting in the instance folder."""
    db.session.rollback()
    return [path for record in db.session.query(Import)
            for path in import_jobs.upload_paths(record) if os.path.exists(path)]


def test_the_upload_answers_before_anything_is_parsed_and_the_page_follows_the_job(app, guest, held):
    response = post(guest, jsonl(3))
    assert response.status_code == 303
    page_url = response.headers["Location"]
    assert re.fullmatch(r"/imports/[0-9a-f]{32}", page_url)
    page = guest.get(page_url)
    assert page.status_code == 200 and "Queued: the import starts in a moment" in page.text
    assert 'hx-trigger="every 1s"' in page.text and f'hx-get="{page_url}/progress"' in page.text
    assert count() == 0 and len(uploads(app)) == 1  # nothing written yet; the file waits

    [task] = held
    task.execute()
    partial = guest.get(page_url + "/progress")
    assert partial.status_code == 200 and "Imported 3 conversations (3 turns)." in partial.text
    assert "hx-get" not in partial.text  # done: the page stops polling
    assert count() == 3 and uploads(app) == []
    record = db.session.query(Import).one()
    assert record.status == "done" and record.stored == 3 and record.finished_at


def test_the_progress_reads_how_far_the_job_got(app, guest, held):
    page_url = post(guest, jsonl(3)).headers["Location"]
    record = db.session.query(Import).one()
    record.status, record.total, record.checked = "running", 40_000, 12_000
    db.session.commit()
    assert "Read 12,000 of 40,000 conversations…" in guest.get(page_url + "/progress").text
    record.stored = 800
    db.session.commit()
    assert "Stored 800 of 40,000 conversations…" in guest.get(page_url + "/progress").text


def test_only_the_uploader_sees_an_import(app, client, held):
    make_account("dana@example.com")
    make_account("lee@example.com")
    sign_in(client, "dana@example.com")
    page_url = post(client, jsonl(2)).headers["Location"]
    assert client.get(page_url).status_code == 200
    other = app.test_client()
    assert other.get(page_url).status_code == 404  # signed out, no session: no 500 either
    assert other.get("/import").status_code == 200  # now a guest of its own
    assert other.get(page_url).status_code == 404 and other.get(page_url + "/progress").status_code == 404
    sign_in(other, "lee@example.com")
    assert other.get(page_url).status_code == 404 and other.get(page_url + "/progress").status_code == 404
    assert client.get("/imports/not-an-id").status_code == 404
    assert client.get("/imports/" + "0" * 32 + "/progress").status_code == 404


def test_a_job_that_crashes_keeps_its_committed_batches_says_why_and_removes_the_file(
        app, guest, monkeypatch):
    from webapp.transfer import batch
    monkeypatch.setattr(batch, "WRITE_BATCH", 5)
    real, calls = batch.write_many, []

    def fails_second_time(checked, user):
        calls.append(len(checked))
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(checked, user)
    monkeypatch.setattr(batch, "write_many", fails_second_time)
    page = upload(guest, (io.BytesIO(jsonl(12)), "c.jsonl"))
    assert page.status_code == 200 and 'id="import-error"' in page.text
    assert "The import stopped (RuntimeError). The first 5 conversations were stored" in page.text
    assert "hx-get" not in page.text
    assert count() == 5  # the first batch, as the page says; nothing of the second
    record = db.session.query(Import).one()
    assert record.status == "failed" and record.stored == 5 and uploads(app) == []


def test_an_unreadable_upload_fails_with_its_reason_and_leaves_no_file(app, guest):
    page = upload(guest, (io.BytesIO(b"{not json"), "broken.json"))
    assert page.status_code == 200 and "Nothing was imported: broken.json: " in page.text
    assert count() == 0 and uploads(app) == []
    assert db.session.query(Import).one().status == "failed"


def test_an_import_whose_worker_died_long_ago_reads_as_failed(app, guest, held):
    page_url = post(guest, jsonl(2)).headers["Location"]
    record = db.session.query(Import).one()
    record.status, record.updated_at = "running", utcnow() - timedelta(minutes=5)
    db.session.commit()
    assert "hx-get" in guest.get(page_url + "/progress").text  # still believed to run
    record.updated_at = utcnow() - import_jobs.STALE_AFTER - timedelta(minutes=1)
    db.session.commit()
    partial = guest.get(page_url + "/progress").text
    assert "its worker ended before it finished." in partial and "hx-get" not in partial


def test_a_job_queued_again_after_its_worker_died_stores_no_copies(app, guest, held):
    from webapp.hooks import JOBS
    assert JOBS["import_job"] is import_jobs.import_job  # the sweep queues a crashed one again
    post(guest, jsonl(4))
    [task] = held
    record = db.session.query(Import).one()
    task.execute()
    assert count() == 4
    record.status = "running"  # as a worker killed before its last commit leaves it
    db.session.commit()
    for path in import_jobs.upload_paths(record):  # (the first run deleted the file)
        with open(path, "wb") as file:
            file.write(jsonl(4))
    task.execute()
    assert count() == 4 and db.session.get(Import, record.id).status == "done"


def test_another_customers_write_is_never_locked_out_between_batches(app, guest, monkeypatch):
    """The job commits each batch: between them a second connection writes at once (SQLite
    answers "database is locked" to a writer that waits zero seconds while a write is open)."""
    from webapp.transfer import batch
    monkeypatch.setattr(batch, "WRITE_BATCH", 5)
    path = db.engine.url.database
    results = []
    real = import_jobs.Progress.stored

    def stored_then_someone_writes(self, n):
        real(self, n)
        other = sqlite3.connect(path, timeout=0)
        try:
            other.execute("UPDATE tenants SET name = name")
            other.commit()
            results.append("written")
        except sqlite3.OperationalError as error:
            results.append(str(error))
        finally:
            other.close()
    monkeypatch.setattr(import_jobs.Progress, "stored", stored_then_someone_writes)
    page = upload(guest, (io.BytesIO(jsonl(15)), "c.jsonl"))
    assert "Imported 15 conversations" in page.text
    assert results == ["written"] * 3
    assert db.session.query(Conversation).count() == 15


def test_the_sweep_fails_stale_imports_and_deletes_their_files(app, guest, held):
    post(guest, jsonl(2))
    post(guest, jsonl(3))
    running, queued = db.session.query(Import).order_by(Import.created_at).all()
    running.status, running.stored = "running", 1
    running.updated_at = utcnow() - import_jobs.STALE_AFTER - timedelta(minutes=1)
    db.session.commit()
    assert import_jobs.fail_stale_imports() == 1  # the queued one is young: its job may come
    assert "1 conversation stored; import the file again" in db.session.get(Import, running.id).error
    assert not any(map(os.path.exists, import_jobs.upload_paths(running)))
    assert all(map(os.path.exists, import_jobs.upload_paths(queued)))
    queued.created_at = utcnow() - import_jobs.NEVER_STARTED - timedelta(minutes=1)
    db.session.commit()
    assert import_jobs.fail_stale_imports() == 1 and uploads(app) == []
    assert db.session.get(Import, queued.id).error.startswith("The import never started")


def test_an_import_waits_its_turn_while_another_is_read(app, guest, held):
    """One import at a time holds its files' records in memory: a second is queued again."""
    from huey.exceptions import RetryTask
    from webapp import locks
    post(guest, jsonl(2))
    [task] = held
    with locks.named_lock(import_jobs.ONE_AT_A_TIME):  # another import is being read
        with pytest.raises(RetryTask):
            task.execute()
        assert count() == 0 and db.session.query(Import).one().status == "queued"
    task.execute()
    assert count() == 2 and db.session.query(Import).one().status == "done"
