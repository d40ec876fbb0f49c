"""The distiller's checkpoint: how far it has read a conversation, and what a read that failed
does to it (read again next time, wait and read less, or give the window up with a record)."""
import logging
from datetime import timedelta

from ...extensions import db
from ...models import utcnow
from ...plurals import plural
from ..models import DistillCheckpoint

log = logging.getLogger(__name__)


def advance(checkpoint: DistillCheckpoint, through_seq: int, outcome: str) -> str:
    db.session.add(checkpoint)
    checkpoint.distilled_through_seq = through_seq
    checkpoint.distilled_at = utcnow()
    checkpoint.last_outcome = outcome[:200]
    checkpoint.failed_tries, checkpoint.retry_after = 0, None
    db.session.commit()
    return outcome


def backed_off(checkpoint: DistillCheckpoint, conversation_id: str, turns: list, error,
               config) -> str:
    """A read cut off at the output cap or refused for size: the same window would likely fail
    at once again, so the next read waits (doubling) and reads less; after
    NIMBUS_MEMORY_MAX_TRIES such reads the window is given up, and the checkpoint says so."""
    db.session.rollback()
    checkpoint = db.session.merge(checkpoint)
    tries, most = (checkpoint.failed_tries or 0) + 1, max(config["NIMBUS_MEMORY_MAX_TRIES"], 1)
    window = f"turns {turns[0].seq + 1}–{turns[-1].seq + 1}"
    if tries >= most:
        log.warning("distiller: gave up on %s of %s after %d cut or refused reads: %s", window,
                    conversation_id, tries, error)
        checkpoint.given_up = f"{window} after {tries} cut or refused reads: {error}"[:300]
        return advance(checkpoint, turns[-1].seq, f"gave up on {window} after {tries} tries: "
                                                  f"{error}")
    minutes = config["NIMBUS_MEMORY_RETRY_MINUTES"] * 2 ** (tries - 1)
    checkpoint.failed_tries = tries
    checkpoint.retry_after = utcnow() + timedelta(minutes=minutes)
    checkpoint.distilled_at = utcnow()
    checkpoint.last_outcome = (f"not read (try {tries} of {most}), again in {minutes:g} min "
                               f"with fewer turns: {error}")[:200]
    db.session.commit()
    log.warning("distiller: %s of %s %s", window, conversation_id, checkpoint.last_outcome)
    return checkpoint.last_outcome


def waiting_out(checkpoint: DistillCheckpoint, now=None) -> str | None:
    """Why this run must not read yet (an earlier read was cut or refused), or None."""
    if checkpoint.retry_after is None or checkpoint.retry_after <= (now or utcnow()):
        return None
    return (f"waiting: {plural(checkpoint.failed_tries, 'cut or refused read')}, next try after "
            f"{checkpoint.retry_after:%H:%M:%S} UTC")


def not_read(checkpoint: DistillCheckpoint, conversation_id: str, through: int, error) -> str:
    """The turns were not read to the end: the checkpoint stays, the next run reads them."""
    log.warning("distiller: turns through %s of %s not read, kept for the next run: %s",
                through, conversation_id, error)
    db.session.rollback()
    outcome = f"not read, will retry: {error}"[:200]
    if checkpoint.distilled_through_seq >= 0 or db.session.get(DistillCheckpoint,
                                                                 conversation_id) is not None:
        checkpoint = db.session.merge(checkpoint)
        checkpoint.last_outcome = outcome
        db.session.commit()
    return outcome
