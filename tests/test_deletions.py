"""A deleted conversation is gone everywhere at once (its share link, the staff console's search,
the customer's own search), can be restored only within its undo window, and the worker
deletes it for good once that window has passed, whether or not its owner comes back."""
from datetime import timedelta

from webapp.chat.deletion_jobs import finish_deletions
from webapp.extensions import db
from webapp.jobs import huey
from webapp.memories.search.keywords import turns_indexed, scored
from webapp.models import Conversation, ShareLink, Turn, utcnow
from webapp.staff.shares import share_url
from webapp.storage import mark_deleted

from .accounts_support import fresh_request_globals, make_account, sign_in
from .support import ask


def deleted_long_ago(conversation, seconds=3600):
    conversation.deleted_at = utcnow() - timedelta(seconds=seconds)
    db.session.commit()


def test_a_deleted_conversations_share_link_is_a_missing_page_at_once(app, alex):
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    link = ShareLink(conversation_id=conversation.id, expires_at=utcnow() + timedelta(days=3))
    db.session.add(link)
    db.session.commit()
    with app.test_request_context():
        path = share_url(link).replace("http://localhost", "")
    assert app.test_client().get(path).status_code == 200
    mark_deleted(conversation)
    fresh_request_globals()
    assert app.test_client().get(path).status_code == 404


def test_the_staff_console_search_omits_a_deleted_conversation(app, client, alex):
    _, conversation, _ = ask(alex, "Do you sell umbrellas?")
    make_account("pat@example.com", "staff")
    sign_in(client, "pat@example.com")
    mark_deleted(conversation)
    page = client.get("/staff?q=umbrella")
    assert page.status_code == 200 and conversation.id not in page.text
    assert client.get(f"/staff/c/{conversation.id}").status_code == 404
    assert client.get(f"/c/{conversation.id}/viewer").status_code == 404


def test_the_customers_own_search_omits_a_deleted_conversation(app, alex):
    _, conversation, _ = ask(alex, "Do you sell umbrellas?")
    assert scored(turns_indexed(alex), "umbrellas", 10, lambda row: row.question)[0]
    mark_deleted(conversation)
    assert scored(turns_indexed(alex), "umbrellas", 10, lambda row: row.question)[0] == {}


def test_restore_is_refused_once_the_undo_window_has_passed(guest):
    from .support import guest_user
    _, conversation, _ = ask(guest_user(guest), "Delete me")
    deleted_long_ago(conversation)  # the worker has not got round to it yet
    assert guest.post(f"/c/{conversation.id}/restore").status_code == 404
    db.session.expire_all()
    assert db.session.get(Conversation, conversation.id).deleted_at is not None


def test_the_worker_finishes_deletions_past_their_window_for_everyone(app, alex, sam):
    _, old, _ = ask(alex, "Delete me")
    _, recent, _ = ask(sam, "Delete me too")
    _, kept, _ = ask(sam, "Keep me")
    deleted_long_ago(old)
    mark_deleted(recent)  # still in its undo window
    ids = old.id, recent.id, kept.id
    assert finish_deletions() == 1
    db.session.expire_all()
    assert db.session.get(Conversation, ids[0]) is None
    assert db.session.get(Conversation, ids[1]) and db.session.get(Conversation, ids[2])
    assert db.session.query(Turn).filter_by(conversation_id=ids[0]).count() == 0
    assert "finish_deletions" in {task.__name__ for task in huey._registry._periodic_tasks}
