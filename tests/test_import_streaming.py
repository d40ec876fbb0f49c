"""An upload is read as a stream: a file of many conversations is stored as it is read, a batch
at a time, never read into memory whole, and stores the same conversations as a file read whole."""
import io
import json

from webapp.extensions import db
from webapp.models import Conversation, Turn
from webapp.transfer import batch, streaming

from .accounts_support import make_account


def chatgpt_export(conversations: int) -> bytes:
    """ChatGPT's conversations.json: `conversations` of three turns each, about 2 KB apiece."""
    records = []
    for n in range(conversations):
        mapping, parent = {"root": {"id": "root", "parent": None, "children": [], "message": None}}, "root"
        for t in range(3):
            for role, text in (("user", f"Question {t} of chat {n}: " + "why " * 40),
                               ("assistant", f"Answer {t} of chat {n}: " + "because " * 60)):
                node = f"{role[0]}{t}"
                mapping[parent]["children"].append(node)
                mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                    "id": node, "author": {"role": role}, "create_time": 1.7e9 + t * 60,
                    "content": {"content_type": "text", "parts": [text]}, "metadata": {}}}
                parent = node
        records.append({"title": f"Chat {n}", "create_time": 1.7e9, "mapping": mapping,
                        "current_node": parent, "id": f"chat-{n}"})
    return json.dumps(records).encode()


class Watched(io.BytesIO):
    """A file that counts what is read from it, and how much at most in one read."""

    def __init__(self, data: bytes, log: dict):
        super().__init__(data)
        self.log = log
        log["opened"] = log.get("opened", 0) + 1
        log["this_open"] = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.log["this_open"] += len(chunk)
        self.log["largest"] = max(self.log.get("largest", 0), len(chunk))
        return chunk

    def readline(self, size=-1):
        line = super().readline(size)
        self.log["this_open"] += len(line)
        self.log["largest"] = max(self.log.get("largest", 0), len(line))
        return line

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def contents(owner) -> list:
    """What an owner's conversations hold, in the order they were stored."""
    rows = db.session.query(Conversation).filter_by(user_id=owner.id).order_by(
        Conversation.imported_at, Conversation.title).all()
    return [(c.title, c.turn_count, c.created_at, c.updated_at, c.import_key,
             [(t.seq, t.question, t.answer, t.messages) for t in db.session.query(Turn).filter_by(
                 conversation_id=c.id).order_by(Turn.seq)]) for c in rows]


def test_a_large_upload_is_stored_as_it_is_read_and_never_read_whole(app, alex, monkeypatch):
    monkeypatch.setattr(streaming, "CHUNK", 64 * 1024)
    raw = chatgpt_export(1500)  # about 3 MB
    assert len(raw) > 2_000_000
    log, read_when_stored = {}, []
    real_write = batch.write_many

    def write_many(checked, user):
        read_when_stored.append(log["this_open"])
        return real_write(checked, user)
    monkeypatch.setattr(batch, "write_many", write_many)
    result = batch.import_files([("conversations.json", lambda: Watched(raw, log))], alex)
    assert len(result.conversations) == 1500 and result.turns == 4500 and not result.skipped
    assert log["largest"] <= 64 * 1024  # never one read of the whole file
    # Read through once to check it, then stored batch by batch as the second reading goes:
    # the first batch was written with a small part of the file read.
    assert log["opened"] >= 2 and len(read_when_stored) > 10
    assert read_when_stored[0] < len(raw) / 10


def test_a_streamed_upload_stores_what_the_file_read_whole_stores(app, alex):
    raw = chatgpt_export(300)
    streamed = batch.import_files([("conversations.json", raw)], alex)
    other = make_account("whole@example.com")
    checked, skipped = batch.read_files([("conversations.json", raw)])
    whole = batch.import_each(checked, other)
    assert streamed.summary == whole.summary and not skipped
    strip = [(title, turns, created, updated, key, [t[1:] for t in rows])
             for title, turns, created, updated, key, rows in contents(alex)]
    assert strip == [(title, turns, created, updated, key, [t[1:] for t in rows])
                     for title, turns, created, updated, key, rows in contents(other)]


def test_a_json_lines_upload_is_read_line_by_line(app, alex, monkeypatch):
    monkeypatch.setattr(streaming, "CHUNK", 4096)
    lines = b"".join(json.dumps({"messages": [
        {"role": "user", "content": f"Question {n} " + "x" * 200},
        {"role": "assistant", "content": f"Answer {n}"}]}).encode() + b"\n" for n in range(3000))
    lines += b"not json\n" + lines.splitlines(True)[0]
    log = {}
    result = batch.import_files([("chat.jsonl", lambda: Watched(lines, log))], alex)
    assert len(result.conversations) == 3000 and result.already == 1
    assert result.skipped == ["line 3001: not valid JSON: Expecting value: line 1 column 1 "
                              "(char 0) — skipped"]
    assert log["largest"] <= 4096  # a line at a time (and the first 4 KB, to know its shape)


def test_a_long_conversation_is_written_in_short_commits_and_hidden_until_whole(
        app, alex, monkeypatch):
    from webapp.transfer import importer
    monkeypatch.setattr(importer, "TURNS_PER_COMMIT", 10)
    monkeypatch.setattr(batch, "TURNS_PER_COMMIT", 10)
    messages = [{"role": role, "content": f"{role} {n}"} for n in range(35)
                for role in ("user", "assistant")]
    raw = json.dumps([{"messages": messages, "id": "long"}]).encode()
    seen, real_commit = [], db.session.commit

    def commit():
        seen.append([(c.turn_count, c.deleted_at is None) for c in db.session.query(
            Conversation).filter_by(user_id=alex.id)])
        real_commit()
    monkeypatch.setattr(db.session, "commit", commit)
    (one,) = batch.import_files([("long.json", raw)], alex).conversations
    parts = [state for state in seen if state]
    assert len(parts) >= 4  # four parts of at most 10 turns, then shown
    assert all(state == [(35, False)] for state in parts[:-1])  # hidden while half written
    assert parts[-1] == [(35, True)]
    assert db.session.query(Turn).filter_by(conversation_id=one.id).count() == 35


def test_a_long_conversation_cut_off_midway_cannot_be_restored_half_written(app, guest, monkeypatch):
    """A worker that dies while writing a long conversation leaves it hidden for the deletion
    sweep; its owner's undo must not bring back the half that was written."""
    from webapp import pacing
    from webapp.transfer import importer
    from .support import guest_user
    monkeypatch.setattr(importer, "TURNS_PER_COMMIT", 10)
    monkeypatch.setattr(batch, "TURNS_PER_COMMIT", 10)
    parts = []

    def worker_dies(pace):
        parts.append(1)
        if len(parts) == 2:
            raise SystemExit("the worker was killed")
    monkeypatch.setattr(pacing.Pace, "batch_done", worker_dies)
    messages = [{"role": role, "content": f"{role} {n}"} for n in range(35)
                for role in ("user", "assistant")]
    raw = json.dumps([{"messages": messages, "id": "long"}]).encode()
    try:
        batch.import_files([("long.json", raw)], guest_user(guest))
    except SystemExit:
        pass
    (half,) = db.session.query(Conversation).all()
    assert half.deleted_at is not None
    assert db.session.query(Turn).filter_by(conversation_id=half.id).count() == 20
    assert guest.post(f"/c/{half.id}/restore").status_code == 404
    db.session.expire_all()
    assert db.session.get(Conversation, half.id).deleted_at is not None
    assert guest.get(f"/c/{half.id}").status_code == 404
