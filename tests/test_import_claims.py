"""An import claims nothing it may not: dates are never later than the import, names the file
gives for who pinned or edited are shown as the file's, and purge counts an imported
conversation's age from its import when that is later than its last message."""
import io
import json
from datetime import datetime, timedelta

from webapp.context.summary.models import ConversationSummary
from webapp.extensions import db
from webapp.models import Conversation, Turn, utcnow
from webapp.transfer import export_conversation

from .support import ask, guest_user, run
from .test_transfer_views import upload


def exported(alex, **turn_fields) -> dict:
    """alex's conversation as Nimbus JSON, its turn changed as a forged file would have it."""
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    data = json.loads(json.dumps(export_conversation(conversation), default=str))
    data["turns"][0].update(turn_fields)
    data["id"] = "forged"
    return data


def imported(guest, data: dict) -> Conversation:
    response = upload(guest, (io.BytesIO(json.dumps(data).encode()), "forged.json"))
    assert response.status_code == 200, response.text
    return Conversation.query.filter_by(user_id=guest_user(guest).id).one()


def test_dates_after_the_import_are_dated_at_the_import(alex, guest):
    data = exported(alex, created_at="9000-01-01T00:00:00Z", feedback="up",
                    feedback_at="2099-01-01T00:00:00Z")
    data["created_at"] = "9000-01-01T00:00:00Z"
    before = utcnow()
    conversation = imported(guest, data)
    turn = db.session.query(Turn).filter_by(conversation_id=conversation.id).one()
    for moment in (turn.created_at, turn.feedback_at, conversation.created_at,
                   conversation.updated_at):
        assert before - timedelta(seconds=5) <= moment <= utcnow()


def test_who_pinned_or_edited_in_the_file_is_shown_as_imported_not_as_staff(alex, guest):
    data = exported(alex, mark="excluded", marked_by_name="Demo admin",
                    marked_at="2099-01-01T00:00:00Z")
    data["summaries"] = [{"style": "concise", "text": "Asked about order 1041.", "through_seq": 0,
                          "edited_by_name": "Demo admin", "edited_at": "2099-01-01T00:00:00Z"}]
    conversation = imported(guest, data)
    turn = db.session.query(Turn).filter_by(conversation_id=conversation.id).one()
    summary = db.session.query(ConversationSummary).filter_by(conversation_id=conversation.id).one()
    assert turn.marked_by_name == summary.edited_by_name == "Demo admin (imported)"
    assert turn.marked_at <= utcnow() and summary.edited_at <= utcnow()
    page = " ".join(guest.get(f"/c/{conversation.id}").text.split())
    assert "by Demo admin (imported)" in page
    assert page.count("Demo admin") == page.count("Demo admin (imported)")


def test_a_conversation_imported_today_from_2023_is_not_purged(app, alex, guest, runner):
    data = exported(alex, created_at="2023-03-01T10:00:00Z")
    data["created_at"] = "2023-03-01T10:00:00Z"
    conversation = imported(guest, data)
    assert conversation.updated_at < datetime(2024, 1, 1)  # the sidebar files it by its own date
    listed = run(runner, "purge", "--older-than", "30", "--dry-run")
    assert conversation.id not in listed

    conversation.imported_at = utcnow() - timedelta(days=31)  # a month later, it is old
    db.session.commit()
    assert conversation.id in run(runner, "purge", "--older-than", "30", "--dry-run")

