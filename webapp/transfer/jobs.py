"""An upload at /import, parsed and stored by a background job rather than inside the request.

The request saves the files under the instance folder (named by the import's random id), records
an `imports` row and queues `import_job`; the page it answers with polls the row's progress. The
job writes in batches of one commit each (import_each), so between batches the database is free
for everyone else's sends; when it ends, done or failed, the files are deleted.

A worker killed mid-import leaves the row "running": the job's lease runs out and the minute's
sweep queues it again, and the run that follows skips what was already stored (sources.py keys
every conversation). One left running without a sign of life for STALE_AFTER, or queued for
NEVER_STARTED (its job was lost with the queue), reads as failed; a sweep every ten minutes marks
it so and deletes its files.
"""
import ctypes
import gc
import logging
import os
import time
from contextlib import contextmanager
from datetime import timedelta

from flask import current_app

from ..extensions import db
from huey import crontab
from huey.exceptions import RetryTask
from sqlalchemy import or_, select

from .. import locks
from ..jobs import app_context, huey, job
from ..models import Import, User, utcnow
from ..plurals import plural
from .batch import ImportResult, import_files
from .importer import InvalidImport, queue_vectors

log = logging.getLogger(__name__)
STALE_AFTER = timedelta(minutes=15)  # a running import not heard from this long has died
NEVER_STARTED = timedelta(hours=6)  # a queued import no worker took this long: its job was lost
SAVE_EVERY = 1.0  # seconds between progress writes while files are checked
# An import streams its files a batch of conversations at a time, but one conversation is held
# whole (a 60 MB one is hundreds of MB parsed): one runs at a time, the next waits its turn.
ONE_AT_A_TIME = "imports"
WAIT_TURN = 15  # seconds before an import that found another running looks again


def upload_folder() -> str:
    folder = os.path.join(current_app.instance_path, "imports")
    os.makedirs(folder, exist_ok=True)
    return folder


def upload_paths(record: Import) -> list[str]:
    """Where the import's files wait for its job: `<import id>-<n>.upload`."""
    return [os.path.join(upload_folder(), f"{record.id}-{n}.upload")
            for n in range(len(record.options.get("files", [])))]


def remove_uploads(record: Import) -> None:
    for path in upload_paths(record):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def is_stale(record: Import, now=None) -> bool:
    """A running import whose job has not written progress for STALE_AFTER (its worker died and
    the sweep gave it up), or a queued one whose job never started."""
    now = now or utcnow()
    return (record.status == "running" and record.updated_at < now - STALE_AFTER) or \
        (record.status == "queued" and record.created_at < now - NEVER_STARTED)


def stale_reason(record: Import) -> str:
    if record.status == "queued":
        return "The import never started: no worker took it. Import the file again."
    return ("The import stopped: its worker ended before it finished"
            + (f" ({plural(record.stored, 'conversation')} stored; import the file again to add "
               "the rest)." if record.stored else "."))


def fail_stale_imports(now=None) -> int:
    """Mark stale imports failed and delete their files; how many."""
    now = now or utcnow()
    rows = db.session.scalars(select(Import).where(or_(
        (Import.status == "running") & (Import.updated_at < now - STALE_AFTER),
        (Import.status == "queued") & (Import.created_at < now - NEVER_STARTED))).limit(100)).all()
    for record in rows:
        record.error, record.status, record.finished_at = stale_reason(record), "failed", now
        remove_uploads(record)
    db.session.commit()
    return len(rows)


@huey.periodic_task(crontab(minute="*/10"), name="fail_stale_imports")
def fail_stale_imports_every_ten_minutes() -> None:
    with app_context():
        fail_stale_imports()


class Progress:
    """The job's progress, written to its row at most every SAVE_EVERY while files are checked
    and after every stored batch (each its own short commit)."""

    def __init__(self, record: Import):
        self.record, self.saved = record, 0.0

    def save(self, force: bool = False) -> None:
        if force or time.monotonic() - self.saved >= SAVE_EVERY:
            self.record.updated_at = utcnow()
            db.session.commit()
            self.saved = time.monotonic()

    @contextmanager
    def checking(self, name: str, data):
        """read_files' progress: each file's records are counted in as it is loaded."""
        self.record.total += len(data) if isinstance(data, list) else 1
        self.save(force=True)
        yield self.checked

    def checked(self, n: int) -> None:
        self.record.checked += n
        self.save()

    def stored(self, n: int) -> None:
        self.record.stored += n
        self.save(force=True)


@job(retries=0)
def import_job(import_id: str) -> str:
    """Parse and store one upload, one import at a time (see the module's docstring); its
    status when it ends."""
    try:
        with locks.named_lock(ONE_AT_A_TIME, wait=0):
            return run_import(import_id)
    except locks.LockBusy:
        raise RetryTask(delay=WAIT_TURN) from None
    finally:
        give_memory_back()


def give_memory_back() -> None:
    """Hand what a large import freed back to the system: glibc's allocator would keep it in
    the worker for good."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the allocator keeps its own counsel
        pass


def run_import(import_id: str) -> str:
    record = db.session.get(Import, import_id)
    if record is None or record.status in ("done", "failed"):
        return record.status if record else "gone"
    uploader, owner = db.session.get(User, record.user_id), db.session.get(User, record.owner_id)
    options = record.options
    record.status, record.total, record.checked = "running", 0, 0
    progress = Progress(record)
    progress.save(force=True)
    try:
        files = list(zip(options["files"], upload_paths(record)))  # streamed from disk
        try:
            # Staff read customers' conversations; writing what the assistant will believe about
            # a customer (memories) or obey in their chats (instructions) is an admin's act.
            result = import_files(files, owner, options["format"], options["strict"],
                                  personal=owner.id == uploader.id or uploader.is_admin,
                                  checking=progress.checking, stored=progress.stored)
        except InvalidImport as error:  # a single file's refusal names it too
            raise InvalidImport(f"{files[0][0]}: {error}" if len(files) == 1 else str(error)) \
                from None
        if not options.get("distil"):
            from ..memories import leave_undistilled
            leave_undistilled(result.conversations)
        queue_vectors(result.conversations, current_app.config)
        if owner.id != uploader.id:
            audit(uploader, owner, result)
        record.status, record.result = "done", result.to_json()
    except InvalidImport as error:
        db.session.rollback()
        record.status, record.error = "failed", f"Nothing was imported: {error}"
    except Exception as error:  # logged; the page says what was kept
        log.exception("import %s failed", import_id)
        db.session.rollback()
        record.status = "failed"
        record.error = (f"The import stopped ({type(error).__name__}). "
                        + (f"The first {plural(record.stored, 'conversation')} were stored; "
                           "import the file again to add the rest (those are skipped)."
                           if record.stored else "Nothing was imported."))
    record.finished_at = record.updated_at = utcnow()
    db.session.commit()
    remove_uploads(record)
    return record.status


def audit(uploader: User, owner: User, result: ImportResult) -> None:
    """Staff imported into a customer's account: the audit log says how much, never what."""
    from ..audit import record
    written = [plural(n, what) for what, n in (
        ("conversation instruction", result.personal["instructions"]),
        ("memory", result.personal["memories"])) if n]
    record(uploader, "imported conversations", customer=owner,
           detail=", ".join([plural(len(result.conversations), "conversation"), *written]
                            + ([f"{len(result.skipped)} skipped"] if result.skipped else [])
                            + ([f"{result.already} already imported"] if result.already else [])
                            + (["instructions and memories left out"] if result.withheld else [])))


JOBS = (import_job, fail_stale_imports_every_ten_minutes)
