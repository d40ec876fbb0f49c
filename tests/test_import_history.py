"""Imported history sits where it happened: dated by the file, unanswered questions marked as
such, and the demo conversation's own export re-imports."""
import json
from datetime import datetime

from webapp.extensions import db
from webapp.models import Conversation
from webapp.shop.demo_conversation import seed_long_conversation
from webapp.transfer import export_conversation, import_conversation

from .support import guest_user

OLD_CHAT = [{"role": "user", "content": "Do you ship to Porto?", "created_at": "2023-05-02T10:00:00Z"},
            {"role": "assistant", "content": "Yes, in 3 days.", "created_at": "2023-05-02T10:00:09Z"},
            {"role": "user", "content": "And to Lyon?", "created_at": "2024-01-07T18:30:00Z"},
            {"role": "assistant", "content": "Also.", "created_at": "2024-01-07T18:31:00Z"}]


def test_an_imported_conversation_is_dated_by_its_last_message_not_the_import(alex):
    conversation = import_conversation(OLD_CHAT, alex)
    assert conversation.created_at == datetime(2023, 5, 2, 10, 0)
    assert conversation.updated_at == datetime(2024, 1, 7, 18, 31)


def test_the_sidebar_files_an_old_import_under_older_not_today(guest):
    imported = import_conversation(OLD_CHAT, guest_user(guest))
    page = guest.get("/").text
    sidebar = page[page.index('id="sidebar"'):page.index("</nav>", page.index('id="sidebar"'))]
    assert ">Today<" not in sidebar and sidebar.index(">Older<") < sidebar.index(imported.title)


def test_a_last_question_without_an_answer_is_stored_as_unanswered(alex):
    conversation = import_conversation(OLD_CHAT + [{"role": "user", "content": "And Oslo?"}], alex)
    first, second, last = conversation.turns
    assert [first.outcome, second.outcome, last.outcome] == ["answered", "answered", "unanswered"]
    assert last.answer == "" and last.messages == [{"role": "user", "content": "And Oslo?"}]


def test_an_unanswered_question_comes_back_unanswered_from_a_nimbus_export(alex):
    conversation = import_conversation([{"role": "user", "content": "Hello?"}], alex)
    again = import_conversation(json.loads(json.dumps(export_conversation(conversation))), alex)
    assert again.turns[0].outcome == "unanswered"


def test_the_demo_conversations_own_export_re_imports(app, alex):
    seed_long_conversation(alex, app.config)
    demo = db.session.query(Conversation).filter_by(title="A week of questions (demo)").one()
    exported = json.loads(json.dumps(export_conversation(demo)))
    again = import_conversation(exported, alex)
    assert again.turn_count == demo.turn_count and again.settings == demo.settings


def test_a_setting_no_policy_reads_is_left_out_of_the_export(alex):
    conversation = import_conversation(OLD_CHAT, alex)
    conversation.settings = {"budget": 900, "recent": 2}  # what older demo databases hold
    db.session.commit()
    exported = export_conversation(conversation)
    assert exported["settings"] == {"budget": 900}
    assert import_conversation(exported, alex).settings == {"budget": 900}
