"""Background batches make way for replies: an import or an embedding run rests between its
batches while someone's reply is being written, at full speed when nobody is chatting, and never
stops for good."""
import json
from datetime import timedelta

from webapp import pacing, storage
from webapp.extensions import db
from webapp.models import utcnow
from webapp.transfer import batch


class Clock:
    """time.monotonic and time.sleep on a clock that only moves when told (or slept on)."""

    def __init__(self):
        self.now, self.slept = 1000.0, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def jsonl(conversations: int) -> bytes:
    return b"".join(json.dumps({"id": f"c{n}", "messages": [
        {"role": "user", "content": f"Question {n}"},
        {"role": "assistant", "content": f"Answer {n}"}]}).encode() + b"\n"
        for n in range(conversations))


def rests_of(monkeypatch) -> list:
    """Record each rest an import or embedding run takes (really resting)."""
    rests, real = [], pacing.Pace.batch_done

    def batch_done(self):
        before = self.rested
        real(self)
        rests.append(self.rested - before)
    monkeypatch.setattr(pacing.Pace, "batch_done", batch_done)
    return rests


def test_an_import_rests_between_batches_while_a_reply_is_being_written(app, alex, monkeypatch):
    monkeypatch.setattr(batch, "WRITE_BATCH", 20)
    rests = rests_of(monkeypatch)
    chat = storage.start_turn(storage.create_conversation(alex), "Where is my order #1043?")
    assert chat.outcome == "pending" and pacing.replies_pending()
    result = batch.import_files([("chat.jsonl", jsonl(100))], alex)
    assert len(result.conversations) == 100
    assert len(rests) >= 5 and all(rest > 0 for rest in rests)


def test_an_import_goes_at_full_speed_when_nobody_is_chatting(app, alex, monkeypatch):
    monkeypatch.setattr(batch, "WRITE_BATCH", 20)
    rests = rests_of(monkeypatch)
    assert not pacing.replies_pending()
    batch.import_files([("chat.jsonl", jsonl(100))], alex)
    assert len(rests) >= 5 and sum(rests) < 0.01


def test_a_rest_is_a_share_of_the_batch_and_ends_when_the_replies_are_written(monkeypatch):
    clock, pending = Clock(), [True] * 3 + [False]
    monkeypatch.setattr(pacing, "time", clock)
    monkeypatch.setattr(pacing, "checkpoint", lambda: None)
    monkeypatch.setattr(pacing, "replies_pending", lambda: pending.pop(0) if pending else False)
    pace = pacing.Pace()
    clock.now += 1.0  # a batch of one second, replies being written all along
    pace.batch_done()
    assert sum(clock.slept) == pacing.LOOK_EVERY * 3  # three looks found a reply, the fourth none


def test_under_any_chat_load_a_rest_is_bounded(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(pacing, "time", clock)
    monkeypatch.setattr(pacing, "checkpoint", lambda: None)
    monkeypatch.setattr(pacing, "replies_pending", lambda: True)
    pace = pacing.Pace()
    clock.now += 0.1
    pace.batch_done()
    assert abs(sum(clock.slept) - pacing.REST_SHARE * 0.1) < 1e-9
    clock.now += 60.0  # a batch that took a minute: the work still goes on after MAX_REST
    pace.batch_done()
    assert abs(pace.rested - pacing.REST_SHARE * 0.1 - pacing.MAX_REST) < 1e-9


def test_a_reply_whose_server_is_gone_never_slows_an_import(app, alex, monkeypatch):
    """A pending turn left by a server that died (its lease ran out) has nobody writing it."""
    monkeypatch.setattr(batch, "WRITE_BATCH", 20)
    rests = rests_of(monkeypatch)
    orphan = storage.start_turn(storage.create_conversation(alex), "Where is my order #1043?")
    orphan.heartbeat_at = utcnow() - timedelta(seconds=app.config["NIMBUS_LEASE_SECONDS"] + 5)
    db.session.commit()
    assert not pacing.replies_pending()
    batch.import_files([("chat.jsonl", jsonl(100))], alex)
    assert len(rests) >= 5 and sum(rests) < 0.01


def test_an_import_writes_its_own_log_back_so_a_chats_commit_never_does(app, alex, monkeypatch):
    """SQLite copies the write-ahead log into the file inside whichever commit finds it long, and
    a chat's commits are the most frequent: after each batch the import has copied its own."""
    monkeypatch.setattr(batch, "WRITE_BATCH", 20)
    copies = []

    def checkpoint():
        copies.append(real_checkpoint())
    real_checkpoint = pacing.checkpoint
    monkeypatch.setattr(pacing, "checkpoint", checkpoint)
    batch.import_files([("chat.jsonl", jsonl(200))], alex)
    assert len(copies) >= 10 and all(pages > 0 and copied == pages for pages, copied in copies)
