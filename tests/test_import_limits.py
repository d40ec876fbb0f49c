"""No upload can stall the shop: a guest imports only what any request may carry, uploads are
rate limited per person and per address, and one import is one resumable embedding job."""
import io
import json

import pytest

from webapp import create_app
from webapp.extensions import db
from webapp.jobs import huey
from webapp.memories.jobs import embed_import_job
from webapp.memories.models import TurnVector
from webapp.models import Conversation, Turn

from .accounts_support import make_account, sign_in
from .test_transfer_views import upload


def big_export() -> bytes:
    """One conversation of 1.5 MB: more than any other request carries (MAX_CONTENT_LENGTH)."""
    messages = [{"role": "user", "content": "x" * 150_000}, {"role": "assistant", "content": "ok"}]
    return json.dumps(messages * 10).encode()


def small_exports(n: int) -> list[bytes]:
    return [json.dumps([{"role": "user", "content": f"Question {i}?"},
                        {"role": "assistant", "content": "An answer."}]).encode() for i in range(n)]


def jsonl(n: int) -> bytes:
    """OpenAI's fine-tuning JSONL: one conversation a line."""
    return b"\n".join(json.dumps({"messages": json.loads(one)}).encode() for one in small_exports(n))


def count() -> int:
    db.session.rollback()
    return db.session.query(Conversation).count()


def test_a_guests_large_upload_is_refused_with_the_way_to_import_more(app, guest):
    assert len(big_export()) > app.config["MAX_CONTENT_LENGTH"]
    response = upload(guest, (io.BytesIO(big_export()), "big.json"))
    assert response.status_code == 413 and "A guest imports files up to 1 MB" in response.text
    assert "Sign up or sign in" in response.text and count() == 0


def test_the_import_page_tells_a_guest_their_size_limit(guest):
    page = " ".join(guest.get("/import").text.split())
    assert "Up to 1 MB at once" in page and "sign up</a> to import up to 64 MB" in page


def test_a_signed_in_customer_imports_a_file_larger_than_a_guest_may(app, client):
    make_account("dana@example.com")
    sign_in(client, "dana@example.com")
    response = upload(client, (io.BytesIO(big_export()), "big.json"))
    assert response.status_code == 200 and "Imported 1 conversation (" in response.text


@pytest.fixture
def limited(app):
    def build(**limits):
        return create_app({"TESTING": True, "SECRET_KEY": "test",
                           "DATABASE_URL": app.config["DATABASE_URL"], **limits})
    return build


def browser(app, ip: str, email: str):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = ip
    sign_in(client, email)
    return client


def test_uploads_past_the_persons_limit_get_429_and_import_nothing(limited):
    app = limited(NIMBUS_RATE_LIMIT_IMPORTS_PER_SESSION="2/minute")
    with app.app_context():
        make_account("dana@example.com")
        dana = browser(app, "203.0.113.7", "dana@example.com")
        files = small_exports(3)
        assert [upload(dana, (io.BytesIO(f), "c.json")).status_code for f in files[:2]] == [200, 200]
        refused = upload(dana, (io.BytesIO(files[2]), "c.json"))
        assert refused.status_code == 429 and "a lot of imports" in refused.text
        assert "Retry-After" in refused.headers and count() == 2


def test_uploads_from_one_address_past_its_limit_get_429_whoever_sends_them(limited):
    app = limited(NIMBUS_RATE_LIMIT_IMPORTS_PER_IP="2/minute")
    with app.app_context():
        people = [make_account(f"p{i}@example.com").email for i in range(3)]
        clients = [browser(app, "203.0.113.7", email) for email in people]
        files = small_exports(3)
        codes = [upload(c, (io.BytesIO(f), "c.json")).status_code for c, f in zip(clients, files)]
        assert codes == [200, 200, 429] and count() == 2


def test_one_import_queues_one_embedding_job_for_all_its_conversations(app, guest, monkeypatch):
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    queued = []
    monkeypatch.setattr(huey, "enqueue", queued.append)
    lines = jsonl(30)
    assert upload(guest, (io.BytesIO(lines), "c.jsonl")).status_code == 200
    queued[0].execute()  # the import job itself, held by this queue
    assert count() == 30
    assert [task.name.rsplit(".", 1)[-1] for task in queued] == ["import_job", "embed_import_job"]


def test_an_embedding_job_cut_off_goes_on_from_where_it_stopped(app, guest):
    lines = jsonl(4)
    assert upload(guest, (io.BytesIO(lines), "c.jsonl")).status_code == 200
    ids = [c.id for c in db.session.query(Conversation).order_by(Conversation.title)]
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    first = db.session.query(Turn).filter_by(conversation_id=ids[0]).one()
    db.session.add(TurnVector(turn_id=first.id, embedding=b"\0" * 4, embedding_model="earlier"))
    db.session.commit()  # the first conversation's vector was stored before a restart

    assert embed_import_job.call_local(ids) == 3  # the rest, not the first again
    assert db.session.get(TurnVector, first.id).embedding_model == "earlier"
    assert embed_import_job.call_local(ids) == 0  # run twice: nothing left to do
    assert db.session.query(TurnVector).count() == 4
