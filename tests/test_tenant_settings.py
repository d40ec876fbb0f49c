"""Shop settings: admins choose context defaults and the persona; shop-wide shared memories."""
import pytest

from webapp.agent.prompts import system_prompt
from webapp.extensions import db
from webapp.context.assemble import Policy
from webapp.memories.models import Memory
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import newest
from webapp.context.summary.section import style_of
from webapp.storage import create_conversation

from .accounts_support import make_account, sign_in

SETTINGS = {"strategy": "window", "budget": "500", "recent_turns": "3", "summary_style": "bullets",
            "assistant_name": "Skye", "instructions": "Always sign off with 'Cheers'."}


@pytest.fixture
def admin(app, client):
    make_account("ada@example.com", "admin")
    sign_in(client, "ada@example.com")
    return client


def test_saved_settings_shape_every_new_request_of_the_shop(admin, app, alex):
    assert admin.post("/staff/settings", data=SETTINGS).status_code == 303
    conversation = create_conversation(alex)
    policy = Policy.for_conversation(conversation, app.config)
    assert (conversation.strategy, policy.budget, policy.recent_turns) == ("window", 500, 3)
    assert style_of(conversation, app.config) == "bullets"
    prompt = system_prompt(conversation)
    assert prompt.startswith("You are Skye,") and "Always sign off with 'Cheers'." in prompt


def test_a_conversations_own_settings_still_win(admin, app, alex):
    admin.post("/staff/settings", data=SETTINGS)
    conversation = create_conversation(alex)
    conversation.settings = {"budget": 900}
    db.session.commit()
    assert Policy.for_conversation(conversation, app.config).budget == 900


def test_empty_fields_fall_back_to_the_apps_defaults(admin, app, alex):
    admin.post("/staff/settings", data=SETTINGS)
    admin.post("/staff/settings", data={})
    conversation = create_conversation(alex)
    assert Policy.for_conversation(conversation, app.config).budget == app.config["NIMBUS_HISTORY_BUDGET"]
    assert system_prompt(conversation).startswith("You are Nimbus,")


@pytest.mark.parametrize("field, value", [("strategy", "psychic"), ("budget", "0"),
                                          ("budget", "9" * 30), ("recent_turns", "many"),
                                          ("summary_style", "haiku"), ("assistant_name", "x" * 61)])
def test_a_bad_value_is_refused_and_nothing_is_saved(admin, alex, field, value):
    response = admin.post("/staff/settings", data={**SETTINGS, field: value})
    assert response.status_code == 422 and "Not saved" in response.text
    assert alex.tenant.settings == {}


def test_admins_add_edit_and_delete_shared_memories_that_apply_to_every_customer(admin, app, alex, sam):
    assert admin.post("/staff/memories", data={"content": "We ship from Lisbon"}).status_code == 303
    memory = Memory.query.filter_by(content="We ship from Lisbon").one()
    assert memory.subject_id is None and memory.memorable_type is None
    for customer in (alex, sam):
        assert memory in newest(SessionScope.for_user(customer), 10)
    admin.post(f"/staff/memories/{memory.id}", data={"content": "We ship from Porto"})
    assert db.session.get(Memory, memory.id).content == "We ship from Porto"
    assert "We ship from Porto" in admin.get("/staff/settings").text
    admin.post(f"/staff/memories/{memory.id}/delete")
    assert db.session.get(Memory, memory.id) is None


def test_an_empty_shared_memory_is_refused(admin):
    response = admin.post("/staff/memories", data={"content": "  "})
    assert response.status_code == 422 and "Not added" in response.text


def test_customers_cannot_change_shared_memories_from_their_panel(admin, app, guest):
    admin.post("/staff/memories", data={"content": "We ship from Lisbon"})
    memory = Memory.query.filter_by(content="We ship from Lisbon").one()
    assert guest.post(f"/memories/{memory.id}", data={"content": "hacked"}).status_code == 404
    assert guest.post(f"/memories/{memory.id}/delete").status_code == 404
