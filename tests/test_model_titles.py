"""With a real model, a conversation is titled by the model after its first answer; the offline
model, a person's rename and a reply that is not a title all keep the first-message title."""
import pytest

from webapp.chat.model_titles import cleaned_title, title_request
from webapp.extensions import db
from webapp.models import Conversation

from .fakes.scripted_model import ScriptedModel
from .support import use_provider, wait_for_replies
from .test_chat import start


class RealModel(ScriptedModel):
    """A scripted model that Nimbus takes for a configured server (not the offline demo)."""
    offline, takes_options = False, True

    def __init__(self, *replies):
        super().__init__(*replies)
        self.options: list[dict] = []

    def stream(self, messages, tools, **options):
        self.options.append(options)
        return super().stream(messages, tools)


@pytest.fixture
def titled(app):
    app.config["NIMBUS_MODEL_TITLES"] = True
    return app


def first_exchange(app, client, model, message="Can I get a refund for order #1043?"):
    use_provider(app, model)
    conversation_id, page = start(client, message)
    client.get(f"/c/{conversation_id}/turns/0/stream")
    wait_for_replies(app)
    db.session.rollback()
    return db.session.get(Conversation, conversation_id)


def test_a_real_model_titles_the_conversation_after_its_first_answer(titled, guest):
    model = RealModel("Yes, order #1043 can be refunded within 30 days.", '"Refund for order 1043."')
    conversation = first_exchange(titled, guest, model)
    assert conversation.title == "Refund for order 1043"
    title_call = model.requests[1]
    assert "Write a title" in title_call[0]["content"] and "order #1043" in title_call[1]["content"]
    assert model.options[1] == {"purpose": "background", "max_tokens": 24}
    assert "Refund for order 1043" in guest.get(f"/c/{conversation.id}").text  # the sidebar too


def test_the_second_turn_asks_for_no_title(titled, guest):
    model = RealModel("Yes.", "Refund question", "Sure.")
    conversation = first_exchange(titled, guest, model)
    guest.post(f"/c/{conversation.id}/messages", data={"message": "Thanks, and order 1044?"})
    guest.get(f"/c/{conversation.id}/turns/1/stream")
    wait_for_replies(titled)
    assert len(model.requests) == 3 and db.session.get(Conversation, conversation.id).title == "Refund question"


def test_a_reply_that_is_not_a_title_keeps_the_first_message_title(titled, guest):
    rambling = "Sure! Here is a title for this conversation about a refund for an order that arrived"
    conversation = first_exchange(titled, guest, RealModel("Yes.", rambling))
    assert conversation.title == "Refund for order #1043"


def test_the_offline_model_and_the_setting_off_ask_for_no_title(app, guest):
    model = RealModel("Yes.", "Never asked")
    app.config["NIMBUS_MODEL_TITLES"] = False
    conversation = first_exchange(app, guest, model)
    assert len(model.requests) == 1 and conversation.title == "Refund for order #1043"
    offline = ScriptedModel("Yes.", "Never asked")
    app.config["NIMBUS_MODEL_TITLES"] = True
    conversation = first_exchange(app, guest, offline, "Where is my order #1041?")
    assert len(offline.requests) == 1 and conversation.title == "Where is my order #1041"


def test_a_rename_made_before_the_title_comes_back_wins(titled, guest, monkeypatch):
    real_stream = RealModel.stream

    def rename_meanwhile(self, messages, tools, **options):
        if "Write a title" in messages[0]["content"]:
            with db.engine.begin() as other:  # the person, on another connection
                other.execute(db.text("UPDATE conversations SET title = 'Mine' "
                                      "WHERE title = 'Refund for order #1043'"))
        return real_stream(self, messages, tools, **options)
    monkeypatch.setattr(RealModel, "stream", rename_meanwhile)
    conversation = first_exchange(titled, guest, RealModel("Yes.", "Refund question"))
    assert conversation.title == "Mine"


@pytest.mark.parametrize("reply, title", [
    ("Refund for order 1043", "Refund for order 1043"),
    ('Title: "Late parcel, order 1044".', "Late parcel, order 1044"),
    ("**Wool socks return**\n\nThis conversation is about…", "Wool socks return"),
    ("<script>alert(1)</script><b>Size exchange</b>", "Size exchange"),
    ("   ", None),
    ("…", None),
    ("This is a long sentence that goes on far too long to be any sidebar's title", None),
])
def test_a_reply_becomes_a_plain_short_title_or_nothing(reply, title):
    assert cleaned_title(reply) == title


def test_the_title_request_carries_the_first_exchange_cut_to_size():
    request = title_request("q" * 5000, "a" * 5000)
    assert len(request) == 2 and len(request[1]["content"]) < 3100
