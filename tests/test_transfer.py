"""Export and import: exact round trips, plain message lists, and refusals that write nothing."""
import json

import pytest

from webapp.models import Conversation
from webapp.extensions import db
from webapp.transfer import export_conversation

from .conftest import ask


def refund_conversation(user):
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?")
    ask(user, "OK. What about my other order, 1042?", conversation)
    return conversation


def test_export_then_import_round_trips_exactly(runner, alex, tmp_path):
    conversation = refund_conversation(alex)
    result = runner.invoke(args=["export", conversation.id])
    path = tmp_path / "export.json"
    path.write_text(result.output)
    imported = runner.invoke(args=["import", str(path)])
    assert imported.exit_code == 0, imported.output
    new_id = imported.output.split("conversation: ")[1].strip()
    before, after = json.loads(result.output), export_conversation(db.session.get(Conversation, new_id))
    assert new_id != conversation.id
    before.pop("id"), after.pop("id")
    assert before == after


def test_import_accepts_a_plain_list_of_messages(runner, tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps([{"role": "system", "content": "ignored"},
                                {"role": "user", "content": "Hi"},
                                {"role": "assistant", "content": "Hello!"},
                                {"role": "user", "content": "Bye"},
                                {"role": "assistant", "content": "Goodbye!"}]))
    result = runner.invoke(args=["import", str(path)])
    assert "Imported 2 turn(s)" in result.output
    new_id = result.output.split("conversation: ")[1].strip()
    shown = runner.invoke(args=["show", new_id]).output
    assert "ignored" not in shown and "Goodbye!" in shown


@pytest.mark.parametrize("payload, reason", [
    ("{not json", "not valid JSON"),
    (json.dumps({"hello": "world"}), "not a Nimbus conversation"),
    (json.dumps([{"role": "user"}]), "expected an object with 'role' and 'content'"),
    (json.dumps([{"role": "user", "content": "Hi"},
                 {"role": "tool", "tool_call_id": "x", "name": "t", "content": "{}"}]),
     "tool result without a matching tool call"),
    (json.dumps({"format": "nimbus.conversation", "version": 1, "turns": [
        {"messages": [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "fine"}]},
        {"messages": [{"role": "assistant", "content": "no question"}]}]}),
     "turn 2: a turn must start with a user message"),
])
def test_malformed_imports_are_refused_and_write_nothing(runner, tmp_path, payload, reason):
    path = tmp_path / "bad.json"
    path.write_text(payload)
    count = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code != 0 and reason in result.output
    assert db.session.query(Conversation).count() == count


def test_export_of_someone_elses_conversation_is_refused(runner, sam):
    _, conversation, _ = ask(sam, "Hello")
    result = runner.invoke(args=["export", conversation.id])
    assert result.exit_code != 0 and "no conversation" in result.output


def test_purge_deletes_old_conversations_and_their_turns(runner, alex):
    from datetime import timedelta
    from webapp.models import Turn
    conversation = refund_conversation(alex)
    conversation_id = conversation.id
    conversation.updated_at -= timedelta(days=40)
    db.session.commit()
    result = runner.invoke(args=["purge", "--older-than", "30d"])
    assert "Deleted 1 conversation(s)" in result.output
    assert db.session.query(Turn).filter_by(conversation_id=conversation_id).count() == 0


def test_purge_removes_old_guests_without_conversations_only(runner, app):
    from datetime import timedelta
    from webapp.accounts import create_guest
    from webapp.models import User
    idle, chatty = create_guest("demo"), create_guest("demo")
    ask(chatty, "Hello")
    for guest in (idle, chatty):
        guest.created_at -= timedelta(days=40)
    idle_id = idle.id
    db.session.commit()
    result = runner.invoke(args=["purge", "--older-than", "30"])
    assert "and 1 idle guest(s)" in result.output
    assert db.session.get(User, idle_id) is None and db.session.get(User, chatty.id) is not None
