"""Deletions finish on their own: the worker's minute sweep deletes for good every conversation
past its undo window, instead of waiting for its owner to open their sidebar again."""
from flask import current_app
from huey import crontab

from .. import storage
from ..jobs import app_context, huey


def finish_deletions() -> int:
    return storage.finish_deletions(current_app.config["NIMBUS_DELETE_UNDO_SECONDS"])


@huey.periodic_task(crontab(minute="*"), name="finish_deletions")
def finish_deletions_every_minute() -> None:
    with app_context():
        finish_deletions()
